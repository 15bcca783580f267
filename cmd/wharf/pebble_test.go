package main

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"
)

// pebble is Let's Encrypt's test ACME server, run in-process from its
// packages on an httptest TLS server. Its validation authority checks
// TLS-ALPN-01 for real unless told to call every challenge valid
// (PEBBLE_VA_ALWAYS_VALID): it asks a DNS stub where the name is
// (127.0.0.1) and connects to port443, which stands for the public port
// 443 and is forwarded to the Hub once the test knows the Hub's port, as
// a router's port forward or a firewall's redirect would.
type pebble struct {
	directory string         // the ACME directory URL
	caFile    string         // PEM of the directory's own HTTPS certificate
	roots     *x509.CertPool // the root Pebble issues certificates under
	orders    atomic.Int64   // new orders received
	port443   *forwarder
}

// newOrderPath is Pebble's newOrder endpoint (its wfe.newOrderPath).
const newOrderPath = "/order-plz"

// startPebble starts Pebble resolving domain to 127.0.0.1, checking
// challenges unless alwaysValid. It sets Pebble's environment (no random
// validation sleeps, no rejected nonces), so its test cannot run in
// parallel.
func startPebble(t *testing.T, domain string, alwaysValid bool) *pebble {
	t.Helper()
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	t.Setenv("PEBBLE_WFE_NONCEREJECT", "0")
	t.Setenv("PEBBLE_VA_ALWAYS_VALID", map[bool]string{true: "1", false: "0"}[alwaysValid])
	logger := log.New(io.Discard, "", 0)
	if testing.Verbose() {
		logger = log.New(os.Stderr, "pebble: ", log.Lmicroseconds)
	}
	p := &pebble{port443: startForwarder(t)}
	resolver := startDNS(t, domain)
	store := db.NewMemoryStore()
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": {Description: "test"}})
	validator := va.New(logger, 0, p.port443.port(), false, resolver, store)
	front := wfe.New(logger, store, validator, authority, []string{"pebble.letsencrypt.org"}, false, false, 0, 0)
	acme := front.Handler()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == newOrderPath {
			p.orders.Add(1)
		}
		acme.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.directory = srv.URL + wfe.DirectoryPath
	p.caFile = filepath.Join(t.TempDir(), "pebble-https.pem")
	if err := os.WriteFile(p.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	p.roots = x509.NewCertPool()
	p.roots.AddCert(authority.GetRootCert(0).Cert)
	return p
}

// startDNS serves, over TCP on loopback, A records saying domain is
// 127.0.0.1 and empty answers to everything else. It returns its address.
func startDNS(t *testing.T, domain string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{Listener: ln, Net: "tcp", Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		for _, q := range r.Question {
			if q.Qtype == dns.TypeA && q.Name == dns.Fqdn(domain) {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET},
					A: net.IPv4(127, 0, 0, 1)})
			}
		}
		w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	served := make(chan error, 1)
	go func() { served <- srv.ActivateAndServe() }()
	select {
	case <-started:
	case err := <-served:
		t.Fatalf("DNS stub: %v", err)
	}
	t.Cleanup(func() {
		srv.Shutdown()
		<-served
	})
	return ln.Addr().String()
}

// forwarder accepts connections before it knows where they go: each
// waits until to is called (or the test ends), then is spliced to that
// address.
type forwarder struct {
	ln     net.Listener
	target chan string // receives the address once, then is closed
	addr   string
	wg     sync.WaitGroup
	ctx    context.Context
}

func startForwarder(t *testing.T) *forwarder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &forwarder{ln: ln, target: make(chan string, 1), ctx: ctx}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(func() {
		cancel()
		ln.Close()
		f.wg.Wait()
	})
	return f
}

func (f *forwarder) port() int { return f.ln.Addr().(*net.TCPAddr).Port }

// to sets the address connections are forwarded to; only the first call
// counts.
func (f *forwarder) to(addr string) {
	select {
	case f.target <- addr:
		close(f.target)
	default:
	}
}

func (f *forwarder) accept() {
	defer f.wg.Done()
	var once sync.Once
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer c.Close()
			once.Do(func() {
				select {
				case f.addr = <-f.target:
				case <-f.ctx.Done():
				}
			})
			if f.addr == "" {
				return
			}
			var d net.Dialer
			up, err := d.DialContext(f.ctx, "tcp", f.addr)
			if err != nil {
				return
			}
			defer up.Close()
			stop := context.AfterFunc(f.ctx, func() { c.Close(); up.Close() })
			defer stop()
			done := make(chan struct{})
			go func() {
				defer close(done)
				io.Copy(up, c)
				up.(*net.TCPConn).CloseWrite()
			}()
			io.Copy(c, up)
			c.Close()
			<-done
		}()
	}
}
