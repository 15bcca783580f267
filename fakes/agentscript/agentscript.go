// Package agentscript names the scripts every test agent plays: the
// scripted ACP agent (fakes/acpagent, a real program speaking ACP over
// stdio), the burst writer it also contains, and the fake AgentRuntime's
// autoplay (fakes.AgentRuntime). A turn plays the script its prompt's
// first word names; the porttest suite of chat.AgentRuntime runs them all
// against both and checks the same updates arrive.
package agentscript

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

// The scripts, by the prompt word that plays them.
const (
	Stream     = "stream"     // Thought, then the answer in three chunks; end_turn with Usage
	Tool       = "tool"       // a tool call editing DiffPath, completed with a diff; end_turn
	Permission = "permission" // an execute tool call needing permission; Allowed or Denied after the answer
	Question   = "question"   // an elicitation asking for "name"; Greeting+name, or Declined
	Plan       = "plan"       // a plan of PlanSteps; end_turn
	Usage      = "usage"      // a usage_update (UsedTokens of WindowTokens, CostUSD); end_turn
	Compaction = "compaction" // compaction_update in_progress, then completed with Summary; end_turn
	Notice     = "notice"     // a notice update (warning NoticeText); end_turn
	Auth       = "auth"       // the prompt answered -32000, authentication required
	Crash      = "crash"      // a chunk of Partial, then the agent exits with status 3
	Cancel     = "cancel"     // a chunk of Working, then waits for session/cancel: cancelled
	Big        = "big"        // one chunk of BigBytes bytes (a 5 MiB line); end_turn
	Flood      = "flood"      // FloodChunks chunks of one "x" each, as fast as possible; end_turn
	Garbage    = "garbage"    // a line that is not JSON, then a chunk of AfterGarbage; end_turn
	Echo       = "echo"       // the prompt's text back, and "image <mime>" per image; end_turn
	// Text is "text BYTES CHUNK": an answer of BYTES bytes ("t" each) in
	// chunks of CHUNK bytes, as fast as possible; end_turn. Defaults 1
	// MiB and 4 KiB. It measures the cost of streamed text.
	Text = "text"
	// Tools is "tools COUNT BYTES": COUNT completed tool calls, tool-1 to
	// tool-COUNT, each with BYTES bytes of text output ("o" each);
	// end_turn. Defaults 16 and 1 MiB. It floods the child with output.
	Tools = "tools"
	// Pace is "pace RATE COUNT": COUNT chunks, RATE a second, chunk i
	// being PaceChunk(i, the time it is written); end_turn. Only the
	// scripted ACP agent plays it (the fake runtime answers it like
	// echo): it measures real time, from the agent's write to a reader.
	Pace = "pace"
)

// What the scripts say.
const (
	Thought      = "thinking it over"
	DiffPath     = "notes.txt"
	DiffOld      = "old line\n"
	DiffNew      = "new line\n"
	ToolTitle    = "Edit notes.txt"
	CommandLine  = "rm -rf build"
	Allowed      = "allowed"
	Denied       = "denied"
	Greeting     = "hello "
	Declined     = "declined"
	NoticeText   = "rate limits are near"
	Summary      = "kept the decisions"
	Partial      = "partial answer"
	Working      = "working on it"
	AfterGarbage = "still here"
	UsedTokens   = 1200
	WindowTokens = 200000
	CostUSD      = 0.25
	BigBytes     = 5 << 20
	FloodChunks  = 10000
	InputTokens  = 10
	OutputTokens = 5
)

// Answer is the stream script's answer, in its three chunks.
var Answer = []string{"Hello", ", ", "world"}

// PlanSteps are the plan script's entries.
var PlanSteps = []string{"read the code", "write the fix"}

// Models and Modes are what every test agent offers; the first of each is
// current in a new session.
var (
	Models = [][2]string{{"fast", "Fast model"}, {"deep", "Deep model"}}
	Modes  = [][2]string{{"ask", "Ask"}, {"code", "Code"}}
)

// Of returns the script a prompt plays: its first word.
func Of(prompt string) string {
	word, _, _ := strings.Cut(strings.TrimSpace(prompt), " ")
	return word
}

// PaceArgs reads the rate and count of a pace prompt; either missing or
// not positive takes its default, 100.
func PaceArgs(prompt string) (rate float64, count int) {
	rate, count = 100, 100
	f := strings.Fields(prompt)
	if len(f) > 1 {
		if r, err := strconv.ParseFloat(f[1], 64); err == nil && r > 0 {
			rate = r
		}
	}
	if len(f) > 2 {
		if n, err := strconv.Atoi(f[2]); err == nil && n > 0 {
			count = n
		}
	}
	return rate, count
}

// SizeArgs reads the two numbers of a text or tools prompt; either
// missing, not positive or past 1 GiB takes its default.
func SizeArgs(prompt string, first, second int) (int, int) {
	f := strings.Fields(prompt)
	arg := func(i, def int) int {
		if len(f) > i {
			if n, err := strconv.Atoi(f[i]); err == nil && n > 0 && n <= 1<<30 {
				return n
			}
		}
		return def
	}
	return arg(1, first), arg(2, second)
}

// Text and tools defaults (SizeArgs).
const (
	TextBytes, TextChunk = 1 << 20, 4 << 10
	ToolCalls, ToolBytes = 16, 1 << 20
)

// PaceChunk is the text of the pace script's chunk seq written at sent:
// "[p SEQ UNIXNANO]".
func PaceChunk(seq int, sent time.Time) string {
	return "[p " + strconv.Itoa(seq) + " " + strconv.FormatInt(sent.UnixNano(), 10) + "]"
}

// ParsePaceChunk finds the first pace chunk in b (a chunk's text, or an
// event or envelope carrying it) and returns its sequence and the time it
// was written, in Unix nanoseconds.
func ParsePaceChunk(b []byte) (seq int, sent int64, ok bool) {
	_, rest, found := bytes.Cut(b, []byte("[p "))
	end := bytes.IndexByte(rest, ']')
	if !found || end < 0 {
		return 0, 0, false
	}
	a, c, found := strings.Cut(string(rest[:end]), " ")
	seq, err1 := strconv.Atoi(a)
	sent, err2 := strconv.ParseInt(c, 10, 64)
	if !found || err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return seq, sent, true
}
