package browsertest

import (
	"io"
	"net"
	"strings"
	"sync"
)

// Proxy relays TCP connections from an address of its own on loopback to
// a Hub, and can cut every connection it carries at once: to a page
// talking to the Hub through it, the network dropped (its live stream
// ends mid-flight) while the Hub goes on as if nothing happened.
type Proxy struct {
	URL    string // "http://127.0.0.1:port/", to open pages at
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	sent   []byte // what pages sent, the first maxSent bytes
	wg     sync.WaitGroup
}

// maxSent bounds what the proxy remembers of what pages sent.
const maxSent = 1 << 20

// NewProxy relays to the Hub at url ("http://host:port/").
func NewProxy(url string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	target := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	p := &Proxy{URL: "http://" + ln.Addr().String() + "/", ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.relay(c)
	}
}

func (p *Proxy) relay(c net.Conn) {
	defer p.wg.Done()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst net.Conn, src io.ReadCloser) {
		io.Copy(dst, src)
		dst.Close()
		src.Close()
		done <- struct{}{}
	}
	go pipe(up, recorder{c, p})
	go pipe(c, up)
	<-done
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// track records a relayed pair, or closes it when the proxy is closed.
func (p *Proxy) track(c, up net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		c.Close()
		up.Close()
		return false
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	return true
}

// Cut closes every connection relayed now; new ones are relayed as before.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// Close stops relaying and closes every connection.
func (p *Proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for c := range conns {
		c.Close()
	}
	p.wg.Wait()
}

// Sent is what pages sent to the Hub through the proxy (requests, their
// headers included, in the order each connection sent them; the first
// MiB), so a test can see what a page asked for.
func (p *Proxy) Sent() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return string(p.sent)
}

// recorder reads a page's connection, remembering what it reads.
type recorder struct {
	net.Conn
	p *Proxy
}

func (r recorder) Read(b []byte) (int, error) {
	n, err := r.Conn.Read(b)
	r.p.mu.Lock()
	if room := maxSent - len(r.p.sent); room > 0 {
		r.p.sent = append(r.p.sent, b[:min(n, room)]...)
	}
	r.p.mu.Unlock()
	return n, err
}
