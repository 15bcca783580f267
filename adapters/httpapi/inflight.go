package httpapi

import (
	"net/http"
	"net/netip"
	"strconv"
	"sync"
)

// DefaultMaxRequestsPerForwardedClient bounds the requests one client
// behind a trusted proxy has in flight at once.
const DefaultMaxRequestsPerForwardedClient = 64

// Behind a reverse proxy every client arrives over the proxy's
// connections, so the daemon's per-address connection cap cannot tell
// them apart and exempts the proxy (it is capped only in total). Without
// a bound of its own, one client could hold every connection the Hub
// admits — a slow body or an open stream each — and starve the others.
// forwardedLimiter gives the per-client cap back at the level where the
// client is known: requests in flight per forwarded client (an IPv4
// address or an IPv6 /64, as the connection cap counts), answered 429
// before anything else of the request is read. Requests that do not
// come through a trusted proxy are not counted here: their connections
// are capped per address already.
type forwardedLimiter struct {
	max int

	mu       sync.Mutex
	inFlight map[netip.Prefix]int
}

func newForwardedLimiter(max int) *forwardedLimiter {
	if max <= 0 {
		max = DefaultMaxRequestsPerForwardedClient
	}
	return &forwardedLimiter{max: max, inFlight: map[netip.Prefix]int{}}
}

// forwardedClient returns the block the request's forwarded client is
// counted under, when its peer is a trusted proxy that named one.
func (a *api) forwardedClient(r *http.Request) (netip.Prefix, bool) {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil || !a.trusted(peer.Addr().Unmap()) {
		return netip.Prefix{}, false
	}
	ip, err := netip.ParseAddr(a.clientAddr(r))
	if err != nil {
		return netip.Prefix{}, false
	}
	if ip = ip.Unmap(); ip.Is4() {
		return netip.PrefixFrom(ip, 32), true
	}
	p, _ := ip.Prefix(64)
	return p, true
}

// acquire counts one request of client in flight, or reports that the
// client is at the cap. Each acquired request is released once.
func (l *forwardedLimiter) acquire(client netip.Prefix) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[client] >= l.max {
		return false
	}
	l.inFlight[client]++
	return true
}

func (l *forwardedLimiter) release(client netip.Prefix) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[client]--; l.inFlight[client] <= 0 {
		delete(l.inFlight, client)
	}
}

// admitForwarded takes a place for a request that came through a trusted
// proxy, answering 429 when its client has none left; release gives the
// place back (a no-op for other requests).
func (a *api) admitForwarded(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	client, forwarded := a.forwardedClient(r)
	if !forwarded {
		return func() {}, true
	}
	if !a.forwarded.acquire(client) {
		w.Header().Set("Retry-After", "1")
		writeStatus(w, http.StatusTooManyRequests, "too many requests in flight from this client (at most "+
			strconv.Itoa(a.forwarded.max)+"): wait for one to finish")
		return nil, false
	}
	return func() { a.forwarded.release(client) }, true
}
