package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"
)

// publicName is the name people type, which the test's proxy answers.
const publicName = "hub.example.ts.net"

// frontProxy is a reverse proxy on loopback in front of the Hub, set up
// as Tailscale Serve and Caddy are: Host passed through, X-Forwarded-For
// (the client's address), -Host and -Proto (https, the proxy's own
// scheme; or none, as some proxies send) added. It counts its
// connections to the Hub.
type frontProxy struct {
	addr  string
	dials atomic.Int64
	tr    *http.Transport
}

func startFrontProxy(t *testing.T, hubAddr string, sendProto bool) *frontProxy {
	t.Helper()
	p := &frontProxy{}
	upstream := &url.URL{Scheme: "http", Host: hubAddr}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			p.dials.Add(1)
		}
		return c, err
	}}
	t.Cleanup(tr.CloseIdleConnections)
	p.tr = tr
	rp := &httputil.ReverseProxy{Transport: tr, ErrorLog: log.New(io.Discard, "", 0), Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(upstream)
		pr.Out.Host = pr.In.Host
		pr.SetXForwarded()
		pr.Out.Header.Del("X-Forwarded-Proto")
		if sendProto {
			pr.Out.Header.Set("X-Forwarded-Proto", "https")
		}
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rp}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	p.addr = ln.Addr().String()
	return p
}

// clientFrom is an HTTP client whose connections come from the loopback
// address from: one simulated client.
func clientFrom(t *testing.T, from string) *http.Client {
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// through sends a request to the proxy naming host, with headers as
// name, value pairs, and returns the response with its body read.
func through(ctx context.Context, t *testing.T, c *http.Client, p *frontProxy, host, method, path, body string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+p.addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

var listenRE = regexp.MustCompile(`msg=serving .*listen=(\S+)`)

// listenAddr waits for the serving line and returns the address listened on.
func listenAddr(ctx context.Context, t *testing.T, d *serveRun) string {
	t.Helper()
	out, err := d.stderr.waitFor(ctx, listenRE.MatchString)
	if err != nil {
		t.Fatalf("no serving line: %v", err)
	}
	return listenRE.FindStringSubmatch(out)[1]
}

// holdThrough opens n requests through p, 10 per simulated client, whose
// bodies it holds back until all n have reached the Hub (the proxy has
// dialed n connections); then it sends one more request and finishes the
// bodies. It returns that request's status and how many of the held
// ones the Hub answered (the others got the proxy's 502).
func holdThrough(ctx context.Context, t *testing.T, p *frontProxy, n int, token string) (extra, answered int) {
	t.Helper()
	type held struct {
		c net.Conn
		r *bufio.Reader
	}
	p.tr.CloseIdleConnections() // so that each held request dials
	before := p.dials.Load()
	var hs []held
	for i := range n {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(fmt.Sprintf("127.0.1.%d", 10+i/10))}}
		c, err := d.DialContext(ctx, "tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(testTimeout))
		fmt.Fprintf(c, "POST /login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{", publicName)
		hs = append(hs, held{c, bufio.NewReader(c)})
	}
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for p.dials.Load()-before < int64(n) && time.Now().Before(deadline) {
		<-tick.C
	}
	if got := p.dials.Load() - before; got < int64(n) {
		t.Fatalf("the proxy dialed %d connections for %d requests", got, n)
	}
	extra = through(ctx, t, clientFrom(t, "127.0.0.9"), p, publicName, "GET", "/api/hub/state", "",
		"Authorization", "Bearer "+token).StatusCode
	for _, h := range hs {
		h.c.Write([]byte("}"))
		resp, err := http.ReadResponse(h.r, nil)
		if err != nil {
			t.Fatalf("a held request got no answer: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			answered++
		}
	}
	return extra, answered
}

// With --public-url alone, a Hub behind a loopback reverse proxy keeps
// each client's own login budget, takes 100 connections through the
// proxy, sets Secure cookies, refuses cross-site origins and answers 421
// to other names; the URL it prints is the public one.
func TestOneSettingPutsTheHubBehindAReverseProxy(t *testing.T) {
	is := is.New(t)
	ctx := testContext(t)
	d := startServe(ctx, t, map[string]string{"USER": "ann"}, stateDir(t), "--public-url", "https://"+publicName)
	is.Equal(d.url, "https://"+publicName+"/") // the URL printed is the one people type
	p := startFrontProxy(t, listenAddr(ctx, t, d), true)
	_, password, _ := firstPassword(d.stderr.String())
	is.True(password != "") // the first user's password was handed over
	login := func(from, pw string, headers ...string) *http.Response {
		return through(ctx, t, clientFrom(t, from), p, publicName, "POST", "/login",
			`{"name":"ann","password":"`+pw+`"}`, headers...)
	}

	for range 5 {
		is.Equal(login("127.0.0.2", "wrong password").StatusCode, http.StatusUnauthorized) // one client's failures
	}
	is.Equal(login("127.0.0.2", "wrong password").StatusCode, http.StatusTooManyRequests) // exhaust its budget
	ok := login("127.0.0.3", password)
	is.Equal(ok.StatusCode, http.StatusOK) // while another client behind the same proxy logs in
	cookies := ok.Cookies()
	is.True(len(cookies) > 0)
	is.Equal(cookies[0].Name, "wharf_hub")                                   // named for the public URL's default port
	is.True(cookies[0].Secure)                                               // and Secure
	is.Equal(ok.Header.Get("Strict-Transport-Security"), "max-age=31536000") // with HSTS
	token := cookies[0].Value

	is.Equal(login("127.0.0.4", password, "Origin", "https://evil.example").StatusCode, http.StatusForbidden) // a cross-site origin is refused
	is.Equal(login("127.0.0.4", password, "Origin", "http://"+publicName).StatusCode, http.StatusForbidden)   // and so is the public name over http
	is.Equal(login("127.0.0.4", password, "Origin", "https://"+publicName).StatusCode, http.StatusOK)         // the public origin is the Hub's
	is.Equal(through(ctx, t, clientFrom(t, "127.0.0.4"), p, "other.example", "GET", "/api/hub/state", "",
		"Authorization", "Bearer "+token).StatusCode, http.StatusMisdirectedRequest) // another name answers 421

	bare := startFrontProxy(t, listenAddr(ctx, t, d), false)
	plain := through(ctx, t, clientFrom(t, "127.0.0.5"), bare, publicName, "POST", "/login", `{"name":"ann","password":"`+password+`"}`)
	is.Equal(plain.StatusCode, http.StatusOK)                      // through a proxy that sends no X-Forwarded-Proto
	is.True(len(plain.Cookies()) > 0 && plain.Cookies()[0].Secure) // the public URL still makes the cookie Secure

	extra, answered := holdThrough(ctx, t, p, 100, token)
	is.Equal(answered, 100)                                                 // 100 connections through the proxy were all served
	is.Equal(extra, http.StatusOK)                                          // and one more request besides
	is.True(!strings.Contains(d.stderr.String(), "connection cap reached")) // nothing was refused
}

// Without the setting (the proxy's name allowed, the proxy not trusted),
// the proxy's connections share one address's cap; the refusals are
// logged once, naming the setting that lifts the cap.
func TestAnUntrustedProxysRefusalsAreLoggedOnce(t *testing.T) {
	is := is.New(t)
	ctx := testContext(t)
	d := startServe(ctx, t, map[string]string{"USER": "ann"}, stateDir(t), "--public-host", publicName)
	p := startFrontProxy(t, listenAddr(ctx, t, d), true)
	_, password, _ := firstPassword(d.stderr.String())
	ok := through(ctx, t, clientFrom(t, "127.0.0.3"), p, publicName, "POST", "/login", `{"name":"ann","password":"`+password+`"}`)
	is.Equal(ok.StatusCode, http.StatusOK) // logged in through the proxy
	token := ok.Cookies()[0].Value

	_, answered := holdThrough(ctx, t, p, 100, token)
	is.True(answered < 100) // the proxy's connections past the cap were refused
	lines := 0
	for _, l := range strings.Split(d.stderr.String(), "\n") {
		if strings.Contains(l, "connection cap reached") {
			lines++
			is.True(strings.Contains(l, "level=WARN"))                                               // at WARN
			is.True(strings.Contains(l, "connections from 127.0.0.1 refused: 64 per client"))        // saying what was refused
			is.True(strings.Contains(l, "behind a reverse proxy on this machine, set --public-url")) // and naming the setting
		}
	}
	is.Equal(lines, 1) // once for the episode, not per connection
}
