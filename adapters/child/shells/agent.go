package shells

import (
	"sync"
	"unicode"
	"unicode/utf8"

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

// agentLabel is commandLine as a label: control characters become spaces,
// and it is cut to MaxLabel characters; "terminal" when nothing is left.
func agentLabel(commandLine string) string {
	out := make([]rune, 0, MaxLabel)
	for _, c := range commandLine {
		if len(out) == MaxLabel {
			break
		}
		if c == utf8.RuneError || unicode.IsControl(c) {
			c = ' '
		}
		out = append(out, c)
	}
	label, err := CheckLabel(string(out))
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
