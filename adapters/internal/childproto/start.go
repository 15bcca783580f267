package childproto

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Subcommand is the first argument of a child's command line, after the
// command the Hub is configured with: `wharf session ...`.
const Subcommand = "session"

// Args are the child's command-line arguments: what the Hub tells the
// child at start, and all it tells it.
type Args struct {
	WorkspaceID string // the workspace's id, which names /s/{ID}/
	Path        string // the workspace folder, absolute
	Socket      string // the Unix socket the child listens on
	// DataDir, optional, is a private directory (mode 0700) the child
	// keeps the workspace's state in across its restarts: the
	// conversation inventory. "" keeps nothing.
	DataDir string
	// Agents, optional, sets the command of an agent by id (a known one
	// or a new one): `--agent ID=JSON`, JSON an array of strings, ID an
	// agent id (ValidAgentID).
	Agents map[string][]string
	// DetachGrace, optional, lets the child outlive its Hub: the end of
	// stdin no longer stops it, StopLine does; it stops once it has been
	// DetachGrace without stdin and without a Hub holding it (HoldPath).
	// 0 keeps the first protocol: the end of stdin stops the child.
	DetachGrace time.Duration
}

// Argv is the child's command line after the Hub's command: Subcommand,
// then the flags that ParseArgs reads back (agents in id order).
func (a Args) Argv() []string {
	argv := []string{Subcommand,
		"--workspace-id", a.WorkspaceID, "--path", a.Path, "--socket", a.Socket}
	if a.DataDir != "" {
		argv = append(argv, "--data-dir", a.DataDir)
	}
	if a.DetachGrace > 0 {
		argv = append(argv, "--detach-grace", a.DetachGrace.String())
	}
	ids := make([]string, 0, len(a.Agents))
	for id := range a.Agents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		b, _ := json.Marshal(a.Agents[id])
		argv = append(argv, "--agent", id+"="+string(b))
	}
	return argv
}

// ErrUsage marks an error in the child's command line; the command exits 2
// for it.
var ErrUsage = errors.New("usage")

// ParseArgs reads the arguments that follow Subcommand. Every flag is
// required and nothing may follow them; a refusal wraps ErrUsage, except a
// request for help (-h), which returns flag.ErrHelp. The flag package's
// diagnostics and usage text go to usage.
func ParseArgs(args []string, usage io.Writer) (Args, error) {
	var a Args
	fs := flag.NewFlagSet("wharf "+Subcommand, flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&a.WorkspaceID, "workspace-id", "", "`id` of the workspace")
	fs.StringVar(&a.Path, "path", "", "workspace `directory`")
	fs.StringVar(&a.Socket, "socket", "", "Unix `socket` to serve on")
	fs.StringVar(&a.DataDir, "data-dir", "", "private `directory` of the workspace's state (optional)")
	fs.DurationVar(&a.DetachGrace, "detach-grace", 0, "how long the session outlives its Hub, waiting to be adopted (optional)")
	fs.Func("agent", "an agent's command, `ID=JSON` (a JSON array of strings); repeatable", func(v string) error {
		id, js, ok := strings.Cut(v, "=")
		var cmd []string
		if !ok || !ValidAgentID(id) || json.Unmarshal([]byte(js), &cmd) != nil || len(cmd) == 0 || cmd[0] == "" {
			return errors.New("want ID=[\"command\", \"arg\", ...]")
		}
		if a.Agents == nil {
			a.Agents = map[string][]string{}
		}
		a.Agents[id] = cmd
		return nil
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return a, err
		}
		return a, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	switch {
	case fs.NArg() > 0:
		return a, fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	case a.WorkspaceID == "" || a.Path == "" || a.Socket == "":
		return a, fmt.Errorf("%w: --workspace-id, --path and --socket are required", ErrUsage)
	case a.DetachGrace < 0:
		return a, fmt.Errorf("%w: --detach-grace must not be negative", ErrUsage)
	}
	return a, nil
}

// ReadyLine is the whole of what a child writes to stdout, once it serves
// on its socket.
const ReadyLine = "ready\n"

// MaxReadyLine bounds what ReadReady reads of a first line that is not
// ReadyLine.
const MaxReadyLine = 64

// WriteReady announces readiness on the child's stdout.
func WriteReady(stdout io.Writer) error {
	_, err := io.WriteString(stdout, ReadyLine)
	return err
}

var (
	// ErrNoReadyLine reports a stdout that ended (or failed) before a
	// whole first line; the child's exit then says why.
	ErrNoReadyLine = errors.New("stdout closed before the readiness line")
	// ErrBadReadyLine reports a first line other than ReadyLine, or one
	// longer than MaxReadyLine.
	ErrBadReadyLine = errors.New("unexpected first line on stdout")
)

// maxEmptyReads bounds the reads in a row that return nothing, as bufio
// does: the reader is broken then.
const maxEmptyReads = 100

// ReadReady reads the child's first line from stdout: nil for ReadyLine,
// ErrBadReadyLine (wrapped, with the line's length, never its text) for
// another line, ErrNoReadyLine when stdout ends first. It reads at most
// MaxReadyLine bytes and never a byte past the first line end, so the
// caller can go on draining r.
func ReadReady(stdout io.Reader) error {
	var line [MaxReadyLine]byte
	n, empty := 0, 0
	for n < len(line) {
		k, err := stdout.Read(line[n : n+1])
		n += k
		if k > 0 && line[n-1] == '\n' {
			if string(line[:n]) == ReadyLine {
				return nil
			}
			return fmt.Errorf("%w (%d bytes)", ErrBadReadyLine, n)
		}
		if k == 0 && err == nil {
			empty++ // a reader that never makes progress is a broken one
		}
		if err != nil || empty > maxEmptyReads {
			return ErrNoReadyLine
		}
	}
	return fmt.Errorf("%w (%d bytes)", ErrBadReadyLine, n)
}
