package acp

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub/chat"
)

// testConn is a connection of rt without an agent process, in dir, whose
// updates go to sink; its terminals are closed when the test ends.
func testConn(t testing.TB, rt *Runtime, dir string, sink chat.AgentSink) *conn {
	if sink == nil {
		sink = func(string, chat.AgentUpdate) {}
	}
	c := &conn{r: rt, dir: dir, sink: sink, log: slog.New(slog.DiscardHandler),
		pending: map[string]*request{}, done: make(chan struct{})}
	c.terms = newTerminals(c)
	t.Cleanup(c.terms.closeAll)
	return c
}

func testRuntime() *Runtime {
	return &Runtime{opts: Options{Env: []string{"PATH=" + os.Getenv("PATH")}}, log: slog.New(slog.DiscardHandler)}
}

// waitDone waits for a terminal's command to have exited.
func waitDone(t testing.TB, c *conn, id string) (acpsdk.WaitForTerminalExitResponse, error) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	return c.terms.wait(ctx, id)
}

func TestTerminalsEndWithTheirAgentConnection(t *testing.T) {
	is := is.New(t)
	c := testConn(t, testRuntime(), t.TempDir(), nil)
	ids := []string{}
	for range 3 {
		id, err := c.terms.create(acpsdk.CreateTerminalRequest{SessionId: "s1", Command: "sleep", Args: []string{"60"}})
		is.NoErr(err) // started
		ids = append(ids, id)
	}
	t0 := c.terms.byID[ids[0]]

	c.end(errors.New("the agent exited"))

	select {
	case <-t0.done:
	case <-time.After(10 * time.Second):
		t.Fatal("a terminal outlived its agent's connection")
	}
	_, err := c.terms.create(acpsdk.CreateTerminalRequest{SessionId: "s1", Command: "true"})
	is.True(err != nil) // no terminal once the connection ended
}

func TestTerminalsAreCountedAcrossTheWorkspacesAgents(t *testing.T) {
	is := is.New(t)
	rt := testRuntime()
	dir := t.TempDir()
	a, b := testConn(t, rt, dir, nil), testConn(t, rt, dir, nil)
	var first string
	for i := range maxTerminals {
		c := a
		if i%2 == 1 {
			c = b
		}
		id, err := c.terms.create(acpsdk.CreateTerminalRequest{SessionId: "s1", Command: "true"})
		is.NoErr(err) // within the workspace's bound
		if i == 0 {
			first = id
		}
	}
	_, err := b.terms.create(acpsdk.CreateTerminalRequest{SessionId: "s1", Command: "true"})
	is.True(err != nil) // one more is refused, whichever agent asks
	is.NoErr(a.terms.release(first))
	_, err = b.terms.create(acpsdk.CreateTerminalRequest{SessionId: "s1", Command: "true"})
	is.NoErr(err) // a released terminal frees its place for any agent
}
