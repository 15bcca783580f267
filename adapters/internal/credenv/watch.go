package credenv

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/wharfhub/wharf/hub"
)

// Watched is a broker that records whether what it lends was asked for:
// a token (the credential helper asked), or its agent (ssh connected to
// it, which it does only once it has reached the server and checked its
// host key). A fetch's failure after either is an authentication
// failure (gitexec's worktree_fetch.go).
type Watched struct {
	hub.SessionBroker
	asked, agentUsed atomic.Bool
}

// Watch watches b; a nil b gives a Watched that records nothing.
func Watch(b hub.SessionBroker) *Watched { return &Watched{SessionBroker: b} }

// Used reports whether a token or the agent was asked for.
func (b *Watched) Used() bool { return b.asked.Load() || b.agentUsed.Load() }

func (b *Watched) Token(ctx context.Context, host string) (string, []byte, error) {
	b.asked.Store(true)
	return b.SessionBroker.Token(ctx, host)
}

// ServeAgent serves the broker's agent at a socket beside path, and at
// path a relay to it that records each connection.
func (b *Watched) ServeAgent(path string) (hub.CredentialAgent, error) {
	inner, err := b.SessionBroker.ServeAgent(filepath.Join(filepath.Dir(path), "up.sock"))
	if err != nil {
		return nil, err
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err == nil {
		err = os.Chmod(path, 0o600)
	}
	if err != nil {
		if l != nil {
			l.Close()
		}
		inner.Close()
		return nil, err
	}
	a := &agentRelay{CredentialAgent: inner, l: l, path: path, used: &b.agentUsed, conns: map[net.Conn]bool{}}
	a.wg.Add(1)
	go a.serve()
	return a, nil
}

// agentRelay relays the connections to its socket to the broker's agent.
type agentRelay struct {
	hub.CredentialAgent
	l    *net.UnixListener
	path string
	used *atomic.Bool
	wg   sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

// maxRelayed bounds the connections relayed at once.
const maxRelayed = 8

func (a *agentRelay) serve() {
	defer a.wg.Done()
	for {
		c, err := a.l.Accept()
		if err != nil {
			return
		}
		a.used.Store(true)
		up, err := net.Dial("unix", a.CredentialAgent.Path())
		a.mu.Lock()
		if err != nil || a.closed || len(a.conns) >= 2*maxRelayed {
			a.mu.Unlock()
			c.Close()
			if up != nil {
				up.Close()
			}
			continue
		}
		a.conns[c], a.conns[up] = true, true
		a.wg.Add(2)
		a.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			defer a.wg.Done()
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
			a.mu.Lock()
			delete(a.conns, dst)
			delete(a.conns, src)
			a.mu.Unlock()
		}
		go pipe(up, c)
		go pipe(c, up)
	}
}

// Path is the relay's socket.
func (a *agentRelay) Path() string { return a.path }

// Close stops relaying, then closes the broker's agent.
func (a *agentRelay) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	for c := range a.conns {
		c.Close()
	}
	a.mu.Unlock()
	a.l.Close()
	a.wg.Wait()
	return a.CredentialAgent.Close()
}
