package acp

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/wharfhub/wharf/hub/chat"
)

// Bounds of a terminal's trace in its conversation.
const (
	traceTailBytes = 8 << 10  // the output shown when the command ends
	maxTraceArgv   = 16 << 10 // the bytes of argv, and of the command line, recorded
	maxTitleRunes  = 200
	// The names of the agent's variables recorded, and their length.
	maxTraceEnv, maxTraceEnvName = 64, 128
	// A trace's RawInput is at most about 8 × maxTraceArgv (128 KiB):
	// argv JSON-escaped (up to 6 bytes a byte), the line, the names
	// (8 KiB at most, escaped).
)

// Wharf's own tool calls (a terminal's trace) have ids under
// wharfToolPrefix. An agent's tool call ids under it, or under
// agentToolPrefix, gain agentToolPrefix (agentToolCallID), so no agent
// can update, complete or retitle a trace, and two agent ids never become
// one.
const (
	wharfToolPrefix = "wharf/"
	agentToolPrefix = "agent/"
)

// agentToolCallID is the id the conversation knows an agent's tool call
// by.
func agentToolCallID(id string) string {
	if strings.HasPrefix(id, wharfToolPrefix) || strings.HasPrefix(id, agentToolPrefix) {
		return agentToolPrefix + id
	}
	return id
}

// terminalTrace is a terminal shown in its session's conversation as a
// command (a tool call of kind execute): whatever the agent says or does
// not say about it, what ran, where, and how it ended are seen.
type terminalTrace struct {
	sid, id string // the session that created the terminal; the tool call
	title   string
	input   []byte
}

// traceInput is a trace's RawInput: the command line for people (what
// the conversation shows as the command), exactly what ran, where, and
// the names (never the values) of the variables the agent added.
type traceInput struct {
	Command    string   `json:"command"`
	Argv       []string `json:"argv"`
	Cwd        string   `json:"cwd"`
	TerminalID string   `json:"terminalId"`
	Env        []string `json:"env,omitempty"`
	Truncated  bool     `json:"truncated,omitempty"` // argv or the line was longer than recorded
}

func newTerminalTrace(sid, terminalID string, p acpsdk.CreateTerminalRequest, cwd string) terminalTrace {
	argv, cut := boundArgv(append([]string{p.Command}, p.Args...))
	line := commandLine(argv)
	if len(line) > maxTraceArgv {
		line, cut = cutBytes(line, maxTraceArgv)+"…", true
	}
	in := traceInput{Command: line, Argv: argv, Cwd: cwd, TerminalID: terminalID, Truncated: cut}
	for i, e := range p.Env {
		if i == maxTraceEnv {
			in.Truncated = true
			break
		}
		in.Env = append(in.Env, cutBytes(e.Name, maxTraceEnvName))
	}
	raw, _ := json.Marshal(in) // strings and slices only: cannot fail
	return terminalTrace{sid: sid, id: wharfToolPrefix + "terminal-" + rand.Text(),
		title: "Run: " + cutRunes(line, maxTitleRunes), input: raw}
}

// started is the trace's first update.
func (tt terminalTrace) started() chat.AgentToolCall {
	kind, status, title := "execute", "in_progress", tt.title
	return chat.AgentToolCall{ID: tt.id, New: true, Title: &title, Kind: &kind, Status: &status, RawInput: tt.input}
}

// finished is the trace's last update: completed on exit code 0, failed
// otherwise, with how it ended and the tail of its output.
func (tt terminalTrace) finished(exit acpsdk.TerminalExitStatus, ended, tail string, cut bool) chat.AgentToolCall {
	status, how := "failed", "ended"
	switch {
	case exit.ExitCode != nil:
		how = fmt.Sprintf("exit code %d", *exit.ExitCode)
		if *exit.ExitCode == 0 && ended == "" {
			status = "completed"
		}
	case exit.Signal != nil:
		how = "killed by " + *exit.Signal
	}
	if ended != "" {
		how += " (" + ended + ")"
	}
	content := []chat.AgentToolContent{{Type: "text", Text: "The command ended: " + how + "."}}
	if tail != "" {
		if cut {
			tail = "…" + tail
		}
		content = append(content, chat.AgentToolContent{Type: "text", Text: tail})
	}
	return chat.AgentToolCall{ID: tt.id, Status: &status, Content: content}
}

// boundArgv keeps argv within maxTraceArgv bytes, cutting the argument
// that crosses it (at a character) and dropping those after.
func boundArgv(argv []string) ([]string, bool) {
	left := maxTraceArgv
	for i, a := range argv {
		if len(a) > left {
			out := append(argv[:i:i], cutBytes(a, left)+"…")
			return out, true
		}
		left -= len(a)
	}
	return argv, false
}

// commandLine is argv as a POSIX shell would read it back.
func commandLine(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// shellQuote quotes one argument: bare when plain, in single quotes when
// printable, else in ANSI-C quotes ($'…') with every control, format
// (bidi, zero-width) or invalid byte escaped, so what people read is
// what ran.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	plain, printable := true, utf8.ValidString(s)
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("@%+=:,./-_", r)):
		case unicode.IsPrint(r) || r == ' ':
			plain = false
		default:
			plain, printable = false, false
		}
	}
	switch {
	case plain:
		return s
	case printable:
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < utf8.RuneSelf && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r > 0xffff && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		case !unicode.IsPrint(r) && r != ' ':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}

// cutRunes cuts s to n characters, marking the cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// cutBytes cuts s to at most n bytes, at a character boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
