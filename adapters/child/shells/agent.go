package shells

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// agentSize is the size an agent's terminal is shown at: its command runs
// on pipes, so no size is real.
const agentCols, agentRows = 80, 24

// WatchTerminal lists an agent's terminal as a read-only shell of kind
// agent labelled with its command line (cut to MaxLabel characters, its
// control characters replaced). It implements chat.TerminalWatcher; it
// does not count towards MaxUserShells. After Close the view works but
// lists nothing.
func (r *Registry) WatchTerminal(commandLine string) chat.TerminalView {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.add(KindAgent, agentLabel(commandLine), agentCols, agentRows)
	if r.closed {
		r.order = r.order[:len(r.order)-1]
		s.closed = true
	}
	return &agentView{r: r, s: s}
}

var _ chat.TerminalWatcher = (*Registry)(nil)

// agentLabel is commandLine, which an agent chose, as a label: control
// characters become spaces, format characters (bidi controls, zero-width
// ones) are dropped (hub.RemoveInvisible), and it is cut to MaxLabel
// characters; "terminal" when nothing is left.
func agentLabel(commandLine string) string {
	spaced := strings.Map(func(c rune) rune {
		if c == utf8.RuneError || unicode.IsControl(c) {
			return ' '
		}
		return c
	}, commandLine)
	out := []rune(hub.RemoveInvisible(spaced))
	label, err := CheckLabel(string(out[:min(len(out), MaxLabel)]))
	if err != nil {
		return "terminal"
	}
	return label
}

// agentView tees an agent's terminal into its shell.
type agentView struct {
	r    *Registry
	s    *shell
	once sync.Once
}

func (v *agentView) Write(p []byte) (int, error) {
	v.s.append(p) // an agent's shell never waits
	return len(p), nil
}

func (v *agentView) Exited(code *int) { v.s.end(code) }

func (v *agentView) Release() { v.once.Do(func() { v.r.drop(v.s) }) }
