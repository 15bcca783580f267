package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
)

// acmeDomain is the public name the tests' Hub gets a certificate for.
const acmeDomain = "wharf.test"

// TestACMEServesTheCAsCertificateAcrossRestarts runs `wharf
// serve --acme-domain` against Pebble, which checks the name over
// TLS-ALPN-01 on the Hub's own listener (and, as the issue has it, with
// PEBBLE_VA_ALWAYS_VALID=1): a client naming the domain gets a
// certificate Pebble's root vouches for and logs in over it, in HTTP/2;
// another name gets none; the cache in <state>/acme is private and holds
// the keys nowhere else (not in the logs, answers or other files); a
// restart serves the cached certificate without a new order.
func TestACMEServesTheCAsCertificateAcrossRestarts(t *testing.T) {
	for _, tc := range []struct {
		name        string
		alwaysValid bool
	}{
		{"the CA checks TLS-ALPN-01", false},
		{"PEBBLE_VA_ALWAYS_VALID=1", true},
	} {
		t.Run(tc.name, func(t *testing.T) { acmeAcrossRestarts(t, tc.alwaysValid) })
	}
}

func acmeAcrossRestarts(t *testing.T, alwaysValid bool) {
	is := is.New(t)
	ctx := testContext(t)
	began := time.Now()
	ca := startPebble(t, acmeDomain, alwaysValid)
	dir := shortStateDir(t)
	env := map[string]string{"USER": "ann"}
	args := []string{"--acme-domain", acmeDomain, "--acme-email", "ops@example.com", "--acme-directory", ca.directory,
		"--acme-ca-file", ca.caFile}
	sec := daemontest.NewSecrets()

	d := startServe(ctx, t, env, dir, args...)
	ca.port443.to("127.0.0.1:" + d.port)
	is.Equal(d.url, "https://"+acmeDomain+":"+d.port+"/") // the printed URL names the domain

	leaf, err := handshake(ctx, d.port, acmeDomain, ca.roots)
	is.NoErr(err)                                 // a client naming the domain trusts what it gets
	is.Equal(leaf.DNSNames, []string{acmeDomain}) // a certificate for the domain alone
	is.Equal(ca.orders.Load(), int64(1))          // from one order
	_, err = handshake(ctx, d.port, "other.test", nil)
	is.True(err != nil) // another name gets no certificate
	_, err = handshake(ctx, d.port, "", nil)
	is.True(err != nil) // nor does a client naming none (an IP address)

	c := domainClient(t, sec, d.port, ca.roots)
	_, password, _ := firstPassword(d.stderr.String())
	resp, s := login(ctx, t, c, d.url, "ann", password)
	is.Equal(resp.StatusCode, http.StatusOK) // the login works over it
	is.Equal(resp.Proto, "HTTP/2.0")         // in HTTP/2
	ck := deviceSessionCookie(resp, "wharf_hub_"+d.port)
	is.True(ck != nil && ck.Secure)                                    // its cookie is Secure
	is.Equal(authStatus(ctx, t, c, d.url, s.SessionID), http.StatusOK) // the Host check lets the domain in
	is.NoErr(d.stop())                                                 // and the daemon stops cleanly

	is.Equal(fileMode(t, filepath.Join(dir, "acme")), os.FileMode(0o700)) // the cache is private
	cached, err := os.ReadDir(filepath.Join(dir, "acme"))
	is.NoErr(err) // and readable
	var names []string
	for _, e := range cached {
		names = append(names, e.Name())
		is.Equal(fileMode(t, filepath.Join(dir, "acme", e.Name())), os.FileMode(0o600)) // every file in it is 0600
	}
	is.Equal(names, []string{"acme_account+key", acmeDomain}) // the account key and the certificate, no challenge left
	daemontest.CheckModes(t, dir)
	_, err = sec.ScanStateDir(dir, "after the first run")
	is.NoErr(err) // the state directory is read

	d2 := startServe(ctx, t, env, dir, args...)
	again, err := handshake(ctx, d2.port, acmeDomain, ca.roots)
	is.NoErr(err)                                                                                             // after a restart, the domain is served
	is.Equal(again.SerialNumber, leaf.SerialNumber)                                                           // the cached certificate
	is.Equal(ca.orders.Load(), int64(1))                                                                      // with no new order
	is.Equal(authStatus(ctx, t, domainClient(t, sec, d2.port, ca.roots), d2.url, s.SessionID), http.StatusOK) // the session lives on
	is.NoErr(d2.stop())                                                                                       // and the daemon stops cleanly

	logs := d.stderr.String() + d2.stderr.String()
	is.Equal(strings.Count(logs, "ACME: serving a certificate"), 2)  // each run says it serves one
	is.True(!strings.Contains(logs, "ACME: cannot obtain or renew")) // and never that it has none
	io.WriteString(sec.Log("wharf serve"), logs)
	for _, f := range []struct{ name, rel string }{{"ACME account key", "acme/acme_account+key"}, {"certificate key", "acme/" + acmeDomain}} {
		n, err := sec.RegisterKeyFile(f.name, dir, f.rel)
		is.NoErr(err)  // the cache file parses
		is.Equal(n, 1) // and holds one private key
	}
	sec.Check(t)
	is.True(slices.ContainsFunc(sec.Found("ACME account key (key 1 of acme/acme_account+key), PEM line 1"),
		func(w string) bool { return strings.Contains(w, "acme/acme_account+key") })) // the scan saw the key where it belongs
	t.Logf("issued, served, restarted in %v", time.Since(began))
}

// TestACMEFailureKeepsServingAndIsLoggedOnce: a
// CA that cannot be reached does not stop the daemon; every handshake
// naming the domain fails and one log line says why, holding no key.
func TestACMEFailureKeepsServingAndIsLoggedOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := testContext(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err) // a port
	unreachable := "https://" + ln.Addr().String() + "/dir"
	ln.Close() // that refuses connections
	dir := stateDir(t)
	d := startServe(ctx, t, map[string]string{"USER": "ann"}, dir, "--acme-domain", acmeDomain, "--acme-directory", unreachable)
	for range 3 {
		_, err := handshake(ctx, d.port, acmeDomain, nil)
		is.True(err != nil) // no certificate: the handshake fails
	}
	is.NoErr(d.stop()) // the daemon kept running and stops cleanly

	logs := d.stderr.String()
	is.Equal(strings.Count(logs, "ACME: cannot obtain or renew"), 1) // the failure is logged once
	i := slices.IndexFunc(strings.Split(logs, "\n"), func(l string) bool { return strings.Contains(l, "ACME: cannot obtain or renew") })
	line := strings.Split(logs, "\n")[i]
	t.Log(line)
	is.True(strings.Contains(line, "level=ERROR"))        // as an error
	is.True(strings.Contains(line, "connection refused")) // saying why
	is.True(strings.Contains(line, unreachable))          // and naming the CA
	sec := daemontest.NewSecrets()
	io.WriteString(sec.Log("wharf serve"), logs)
	n, err := sec.RegisterKeyFile("ACME account key", dir, "acme/acme_account+key")
	is.NoErr(err)  // the account key was made before the CA was asked
	is.Equal(n, 1) // one key
	sec.Check(t)
}

// shortStateDir is a state directory whose path leaves room for the
// sessions' socket names, whatever the test's name.
func shortStateDir(t *testing.T) string {
	tmp, err := os.MkdirTemp("", "wharf-acme")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	return filepath.Join(tmp, "state")
}

// handshake connects to the Hub on 127.0.0.1:port naming serverName
// (none when empty) and returns the certificate it presents, verified
// against roots unless roots is nil.
func handshake(ctx context.Context, port, serverName string, roots *x509.CertPool) (*x509.Certificate, error) {
	d := tls.Dialer{Config: &tls.Config{ServerName: serverName, RootCAs: roots, InsecureSkipVerify: roots == nil}}
	c, err := d.DialContext(ctx, "tcp", "127.0.0.1:"+port)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.(*tls.Conn).ConnectionState().PeerCertificates[0], nil
}

// domainClient is an HTTP client that reaches acmeDomain at 127.0.0.1,
// trusting roots alone, speaking HTTP/2 when offered, whose answers sec
// records.
func domainClient(t *testing.T, sec *daemontest.Secrets, port string, roots *x509.CertPool) *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, "127.0.0.1:"+port)
		}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: sec.Transport(tr)}
}

// --acme-domain serves HTTPS, so it lets the Hub listen on every
// interface; its variable sets it like any flag; the printed URL names
// the domain, without the port when it is 443.
func TestServeACMEFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		port    int
		wantURL string
	}{
		{"flag on all interfaces", []string{"--listen", ":443", "--acme-domain", "Hub.Example.com"}, nil, 443, "https://hub.example.com/"},
		{"variable, another port", []string{"--listen", "0.0.0.0:8443"}, map[string]string{"WHARF_ACME_DOMAIN": "hub.example.com",
			"WHARF_ACME_EMAIL": "ops@example.com"}, 8443, "https://hub.example.com:8443/"},
		{"IPv6, a private CA", []string{"--listen", "[::]:443", "--acme-domain", "hub.example.com", "--acme-directory",
			"https://ca.internal/dir"}, nil, 443, "https://hub.example.com/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			env := map[string]string{"XDG_STATE_HOME": t.TempDir()}
			for k, v := range tc.env {
				env[k] = v
			}
			f, err := parseServe(tc.args, envOf(env), io.Discard)
			is.NoErr(err)                                                                           // accepted without --allow-insecure-http
			is.Equal(serveURL(f, false, &net.TCPAddr{IP: net.IPv4zero, Port: tc.port}), tc.wantURL) // the URL names the domain
		})
	}
}
