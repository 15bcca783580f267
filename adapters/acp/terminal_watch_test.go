package acp

import (
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub/chat"
)

// watcher records the terminals shown to people.
type watcher struct {
	mu    sync.Mutex
	views []*view
}

type view struct {
	line     string
	mu       sync.Mutex
	out      strings.Builder
	exited   chan *int
	released int
}

func (w *watcher) WatchTerminal(line string) chat.TerminalView {
	w.mu.Lock()
	defer w.mu.Unlock()
	v := &view{line: line, exited: make(chan *int, 1)}
	w.views = append(w.views, v)
	return v
}

func (v *view) Write(p []byte) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.out.Write(p)
	return len(p), nil
}

func (v *view) Exited(code *int) { v.exited <- code }

func (v *view) Release() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.released++
}

func (v *view) state() (string, int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.out.String(), v.released
}

func TestAnAgentsTerminalIsShownUntilItIsReleased(t *testing.T) {
	is := is.New(t)
	w := &watcher{}
	rt := testRuntime()
	rt.opts.Terminals = w
	c := testConn(t, rt, t.TempDir(), nil)
	id, err := c.terms.create(acpsdk.CreateTerminalRequest{SessionId: "s1", Command: "sh", Args: []string{"-c", "echo built it; exit 4"}})
	is.NoErr(err)             // started
	is.Equal(len(w.views), 1) // the terminal is shown
	v := w.views[0]
	is.Equal(v.line, "sh -c 'echo built it; exit 4'") // labelled with its command line, quoted
	select {
	case code := <-v.exited:
		is.True(code != nil && *code == 4) // its end is shown with its code
	case <-time.After(10 * time.Second):
		t.Fatal("the view was not told the command exited")
	}
	out, released := v.state()
	is.Equal(out, "built it\n") // its output was teed to the view
	is.Equal(released, 0)       // it stays shown until released
	is.NoErr(c.terms.release(id))
	_, released = v.state()
	is.Equal(released, 1) // released, it is no longer shown

	_, err = c.terms.create(acpsdk.CreateTerminalRequest{SessionId: "s1", Command: "sleep", Args: []string{"60"}})
	is.NoErr(err) // another starts
	c.terms.closeAll()
	_, released = w.views[1].state()
	is.Equal(released, 1) // the end of the agent's connection releases its views
}
