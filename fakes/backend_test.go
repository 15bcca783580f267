package fakes_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

const dir = "/home/ann/ws"

func newBackend() *fakes.Backend {
	b := fakes.NewBackend()
	b.Dirs = func(p string) bool { return p == dir }
	return b
}

func TestBackend(t *testing.T) {
	porttest.Backend(t, func(*testing.T) (hub.Backend, string) {
		b := newBackend()
		b.SetAgents(porttest.SessionAgent)
		return b, dir
	})
}

// bounded returns a context that ends the wait of a broken test.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestBackendScripting(t *testing.T) {
	spec := hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: dir}

	t.Run("FailNextStart fails one start", func(t *testing.T) {
		is := is.New(t)
		b := newBackend()
		boom := hub.Errorf(hub.Internal, "boom")
		b.FailNextStart(boom)
		_, err := b.Start(bounded(t), spec)
		is.Equal(err, error(boom))   // the scripted failure
		is.True(!b.Running("alpha")) // nothing runs
		_, err = b.Start(bounded(t), spec)
		is.NoErr(err)                      // the next start succeeds
		is.True(b.Running("alpha"))        // and runs
		is.Equal(b.StartCount("alpha"), 2) // both calls counted
	})

	t.Run("Hold blocks starts until released", func(t *testing.T) {
		is := is.New(t)
		b := newBackend()
		release := b.Hold()
		got := make(chan error, 1)
		go func() {
			_, err := b.Start(bounded(t), spec)
			got <- err
		}()
		is.NoErr(b.WaitHeld(bounded(t), 1)) // the start is in flight
		is.True(!b.Running("alpha"))        // and not running yet
		release()
		release() // twice is harmless
		select {
		case err := <-got:
			is.NoErr(err) // the start completes
		case <-time.After(10 * time.Second):
			t.Fatal("start still held after release")
		}
		is.True(b.Running("alpha")) // running now
	})

	t.Run("a held start ends with its context", func(t *testing.T) {
		is := is.New(t)
		b := newBackend()
		defer b.Hold()()
		ctx, cancel := context.WithCancel(bounded(t))
		got := make(chan error, 1)
		go func() {
			_, err := b.Start(ctx, spec)
			got <- err
		}()
		is.NoErr(b.WaitHeld(bounded(t), 1))
		cancel()
		select {
		case err := <-got:
			is.True(errors.Is(err, context.Canceled)) // the context's error
		case <-time.After(10 * time.Second):
			t.Fatal("held start ignored its context")
		}
		is.True(!b.Running("alpha")) // nothing started
	})

	t.Run("Crash ends the session on its own", func(t *testing.T) {
		is := is.New(t)
		b := newBackend()
		rs, err := b.Start(bounded(t), spec)
		is.NoErr(err)
		c, err := rs.Dial(bounded(t))
		is.NoErr(err) // an open connection
		b.Crash("alpha")
		select {
		case <-rs.Done():
		default:
			t.Fatal("Done still open after Crash")
		}
		is.True(!b.Running("alpha")) // no longer running
		c.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = c.Read(make([]byte, 1))
		is.True(errors.Is(err, io.EOF)) // the connection broke
		_, err = rs.Facts(bounded(t))
		is.Equal(hub.KindOf(err), hub.Unavailable) // facts fail
		is.NoErr(rs.Stop(bounded(t)))              // stopping a crashed session is a no-op
		b.Crash("alpha")                           // crashing nothing too
	})

	t.Run("SetFacts and FailFacts", func(t *testing.T) {
		is := is.New(t)
		b := newBackend()
		rs, err := b.Start(bounded(t), spec)
		is.NoErr(err)
		shells := []hub.Shell{{Attached: true, Label: "zsh"}}
		b.SetFacts("alpha", hub.WorkspaceSessionFacts{WorkspaceAPIRevision: 25, Shells: shells})
		shells[0].Label = "changed" // the fake keeps its own copy
		f, err := rs.Facts(bounded(t))
		is.NoErr(err)
		is.Equal(f.WorkspaceAPIRevision, 25)                            // the set revision
		is.Equal(f.Shells, []hub.Shell{{Attached: true, Label: "zsh"}}) // and shells

		c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return rs.Dial(ctx)
		}}}
		resp, err := c.Get("http://session/_wharf/facts")
		is.NoErr(err)
		body, _ := io.ReadAll(bufio.NewReader(resp.Body))
		resp.Body.Close()
		is.Equal(string(body), `{"workspaceApiRevision":25,"shells":[{"attached":true,"label":"zsh"}]}`+"\n") // the wire agrees

		boom := errors.New("wedged")
		b.FailFacts("alpha", boom)
		_, err = rs.Facts(bounded(t))
		is.Equal(err, boom) // the scripted failure
		b.FailFacts("alpha", nil)
		_, err = rs.Facts(bounded(t))
		is.NoErr(err) // cleared
	})

	t.Run("one session per workspace", func(t *testing.T) {
		is := is.New(t)
		b := newBackend()
		rs, err := b.Start(bounded(t), spec)
		is.NoErr(err)
		_, err = b.Start(bounded(t), spec)
		is.Equal(hub.KindOf(err), hub.Conflict) // a running workspace does not start twice
		is.NoErr(rs.Stop(bounded(t)))
		_, err = b.Start(bounded(t), spec)
		is.NoErr(err) // but again after a stop
	})
}

func TestAHostsPlaceAdopts(t *testing.T) {
	machines := map[*testing.T]*fakes.Hosts{} // one machine per test, reached by each of its Hubs
	porttest.Adopter(t, func(t *testing.T) (hub.Backend, string) {
		if machines[t] == nil {
			machines[t] = fakes.NewHosts()
		}
		p, err := machines[t].Connect(hub.Host{Name: "gpu", Destination: "gpu.example"})
		if err != nil {
			t.Fatal(err)
		}
		return p, "/home/gpu"
	})
}
