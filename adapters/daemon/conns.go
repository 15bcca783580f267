package daemon

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// Connection bounds. Each connection costs a descriptor and a goroutine
// whatever it does, so a client that opens many and sends nothing (or a
// byte at a time) could otherwise exhaust the process's descriptors and
// starve everyone: connections are capped in total and per client
// address (IPv6 by /64, the block one subscriber usually holds). The caps
// are generous for people (a browser opens six per host) and apply to
// connections, not requests.
const (
	DefaultMaxConns          = 1024
	DefaultMaxConnsPerClient = 64
)

// connLimiter admits connections under the caps and tracks what each is
// doing, so a shutdown closes at once the connections that carry no
// request.
type connLimiter struct {
	max, perClient int
	exempt         func(netip.Addr) bool // peers not capped per address (trusted proxies)
	log            *slog.Logger
	now            func() time.Time

	mu      sync.Mutex
	total   int
	byPeer  map[netip.Prefix]int
	states  map[net.Conn]http.ConnState
	closing bool
	refusal refusalLog
}

func newConnLimiter(max, perClient int, exempt func(netip.Addr) bool, log *slog.Logger, now func() time.Time) *connLimiter {
	return &connLimiter{max: max, perClient: perClient, exempt: exempt, log: log, now: now,
		byPeer: map[netip.Prefix]int{}, states: map[net.Conn]http.ConnState{}, refusal: newRefusalLog()}
}

// clientKey is the address block a connection is counted under.
func clientKey(a net.Addr) (netip.Prefix, bool) {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Prefix{}, false
	}
	ip := ap.Addr().Unmap()
	if ip.Is4() {
		return netip.PrefixFrom(ip, 32), true
	}
	p, _ := ip.Prefix(64)
	return p, true
}

// listener wraps ln so that a connection over a cap is closed as soon as
// it is accepted, before anything is read from it.
type limitedListener struct {
	net.Listener
	l *connLimiter
}

func (ln limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ok, report := ln.l.admit(c)
		if ok {
			return &limitedConn{Conn: c, l: ln.l}, nil
		}
		c.Close()
		report()
	}
}

// admit counts c in if it is under the caps. A refused connection comes
// with report, to call once c is closed and outside the lock: it logs
// the refusal when it begins an episode (refusals.go).
func (l *connLimiter) admit(c net.Conn) (ok bool, report func()) {
	key, hasKey := clientKey(c.RemoteAddr())
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if l.total >= l.max {
		return false, l.refusal.begin(totalKey, now, func() { l.logTotalRefusal() })
	}
	if hasKey && !l.exempt(key.Addr()) {
		if l.byPeer[key] >= l.perClient {
			return false, l.refusal.begin(key, now, func() { l.logClientRefusal(key) })
		}
		l.byPeer[key]++
	}
	l.total++
	return true, nil
}

// limitedConn gives its place back once, when closed.
type limitedConn struct {
	net.Conn
	l    *connLimiter
	once sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() {
		key, ok := clientKey(c.RemoteAddr())
		l := c.l
		l.mu.Lock()
		l.total--
		l.refusal.end(totalKey)
		if ok && !l.exempt(key.Addr()) {
			if l.byPeer[key]--; l.byPeer[key] <= 0 {
				delete(l.byPeer, key)
			}
			l.refusal.end(key)
		}
		l.mu.Unlock()
	})
	return c.Conn.Close()
}

// track is the server's ConnState hook. Connections are closed outside
// mu: closing one takes mu to give its place back.
func (l *connLimiter) track(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	late := s == http.StateNew && l.closing
	switch {
	case s == http.StateClosed || s == http.StateHijacked || late:
		delete(l.states, c)
	default:
		l.states[c] = s
	}
	l.mu.Unlock()
	if late {
		c.Close() // arrived during the shutdown: it will carry no request
	}
}

// closeQuiet closes every connection that carries no request: those
// accepted but yet to send one, which http.Server.Shutdown would otherwise
// wait five seconds for. Idle keep-alive ones Shutdown closes itself.
func (l *connLimiter) closeQuiet() {
	l.mu.Lock()
	l.closing = true
	var quiet []net.Conn
	for c, s := range l.states {
		if s == http.StateNew {
			quiet = append(quiet, c)
		}
	}
	l.mu.Unlock()
	for _, c := range quiet {
		c.Close()
	}
}
