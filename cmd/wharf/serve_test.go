package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/statedir"
)

// deviceSessionCookie returns the response's cookie named name, or nil.
func deviceSessionCookie(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestServe runs the daemon end to end: first user, login, cookie, state,
// logout, shutdown, file modes, restart, and what the logs never hold.
func TestServe(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := testContext(t)
	dir := stateDir(t)
	env := map[string]string{"USER": "ann", "HOME": t.TempDir()}
	c := newClient(t, nil)

	d := startServe(ctx, t, env, dir)
	is.True(strings.HasPrefix(d.url, "http://127.0.0.1:")) // the first stdout line is the URL
	is.True(strings.HasSuffix(d.url, "/"))                 // ending in a slash
	name, password, _ := firstPassword(d.stderr.String())
	is.Equal(name, "ann")                                                 // the first user is named after $USER
	is.True(len(password) >= 16)                                          // with a long random password
	is.True(strings.Contains(d.stderr.String(), "wharf user passwd ann")) // the banner says how to change it
	is.True(!strings.Contains(d.stderr.String(), password))               // stderr is no terminal: the password is not printed
	pwFile := filepath.Join(dir, "first-user-password")
	is.True(strings.Contains(d.stderr.String(), pwFile)) // but put in a file whose path is
	is.Equal(fileMode(t, pwFile), os.FileMode(0o600))    // readable only by its owner

	resp, s1 := login(ctx, t, c, d.url, "ann", password)
	is.Equal(resp.StatusCode, http.StatusOK) // the printed password logs in
	is.Equal(s1.User, "ann")                 // as the first user
	is.True(s1.SessionID != "")              // with a session id
	ck := deviceSessionCookie(resp, "wharf_hub_"+d.port)
	is.True(ck != nil)                          // the cookie is named after the port
	is.Equal(ck.Value, s1.SessionID)            // and holds the session
	is.True(ck.HttpOnly)                        // out of scripts' reach
	is.Equal(ck.SameSite, http.SameSiteLaxMode) // SameSite=Lax
	is.Equal(ck.Path, "/")                      // for the whole Hub
	is.True(!ck.Secure)                         // not Secure over plain HTTP
	is.True(ck.MaxAge > 0)                      // persistent, for the session's lifetime

	resp, body := call(ctx, t, c, "GET", d.url+"api/hub/state", s1.SessionID, nil)
	is.Equal(resp.StatusCode, http.StatusOK)               // the bearer reads the state
	is.Equal(resp.Header.Get("Cache-Control"), "no-store") // never cached
	var st map[string]any
	is.NoErr(json.Unmarshal(body, &st))               // the state is JSON
	is.Equal(st["hubApiRevision"], float64(11))       // Hub revision 11
	is.Equal(st["workspaceApiRevision"], float64(24)) // workspace revision 24

	req, err := http.NewRequestWithContext(ctx, "GET", d.url+"api/hub/state", nil)
	is.NoErr(err) // request built
	req.AddCookie(&http.Cookie{Name: ck.Name, Value: ck.Value})
	cresp, err := c.Do(req)
	is.NoErr(err) // the cookie request is answered
	cresp.Body.Close()
	is.Equal(cresp.StatusCode, http.StatusOK)                           // the cookie authenticates too
	is.Equal(authStatus(ctx, t, c, d.url, ""), http.StatusUnauthorized) // no credential, no state

	const wrong = "wrong-horse-battery-staple"
	resp, _ = login(ctx, t, c, d.url, "ann", wrong)
	is.Equal(resp.StatusCode, http.StatusUnauthorized) // a wrong password is refused
	_, kept := login(ctx, t, c, d.url, "ann", password)
	is.True(kept.SessionID != "") // a second session, kept across the restart

	resp, body = call(ctx, t, c, "POST", d.url+"logout", s1.SessionID, nil)
	is.Equal(resp.StatusCode, http.StatusOK)                                      // logout succeeds
	is.Equal(strings.TrimSpace(string(body)), `{"revoked":true}`)                 // and says so
	is.Equal(authStatus(ctx, t, c, d.url, s1.SessionID), http.StatusUnauthorized) // the bearer is dead after logout
	is.Equal(authStatus(ctx, t, c, d.url, kept.SessionID), http.StatusOK)         // other sessions live on

	is.NoErr(d.stop()) // cancelling ctx stops serve promptly, without error
	_, _, logs := firstPassword(d.stderr.String())
	is.Equal(fileMode(t, dir), os.FileMode(0o700))                            // the state directory is private
	is.Equal(fileMode(t, filepath.Join(dir, "wharf.db")), os.FileMode(0o600)) // and so is the database

	d2 := startServe(ctx, t, env, dir)
	is.Equal(authStatus(ctx, t, c, d2.url, kept.SessionID), http.StatusOK)         // sessions survive a restart
	is.Equal(authStatus(ctx, t, c, d2.url, s1.SessionID), http.StatusUnauthorized) // and so does a logout
	is.NoErr(d2.stop())                                                            // the restarted daemon stops cleanly
	logs2 := d2.stderr.String()
	is.Equal(strings.Count(d.stderr.String()+logs2, "created the first user"), 1) // printed once: not again on restart

	for _, logs := range []string{logs, logs2} {
		is.True(strings.Contains(logs, "level=DEBUG msg=request")) // debug request logs were captured
		for _, secret := range []string{password, wrong, s1.SessionID, kept.SessionID} {
			is.True(!strings.Contains(logs, secret)) // logs never hold a password, session id or cookie
		}
	}
}

// TestServeSecondInstance: a second serve on a state directory in use is
// refused, and the first keeps serving.
func TestServeSecondInstance(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := testContext(t)
	dir := stateDir(t)
	env := map[string]string{"USER": "ann"}
	d := startServe(ctx, t, env, dir)

	d2, err := tryServe(ctx, env, dir)
	if d2 != nil {
		d2.stop()
	}
	canon, cerr := filepath.EvalSymlinks(dir)
	is.NoErr(cerr)                                                                      // the state dir has a canonical path
	is.True(errors.Is(err, statedir.ErrLocked))                                         // the second serve is refused
	is.True(strings.Contains(err.Error(), "in use"))                                    // saying the directory is in use
	is.True(strings.Contains(err.Error(), canon))                                       // naming it
	is.True(strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())))          // and the process holding it
	is.Equal(authStatus(ctx, t, newClient(t, nil), d.url, ""), http.StatusUnauthorized) // the first still answers
	is.NoErr(d.stop())                                                                  // and stops cleanly
}

func TestServeRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"non-loopback without TLS", []string{"--listen", "0.0.0.0:0"}, "--allow-insecure-http"},
		{"all interfaces without TLS", []string{"--listen", ":0"}, "--allow-insecure-http"},
		{"IPv6 any without TLS", []string{"--listen", "[::]:0"}, "--allow-insecure-http"},
		{"cert without key", []string{"--tls-cert", "cert.pem"}, "--tls-cert and --tls-key go together"},
		{"key without cert", []string{"--tls-key", "key.pem"}, "--tls-cert and --tls-key go together"},
		{"missing TLS files", []string{"--tls-cert", "missing.pem", "--tls-key", "missing.pem"}, "TLS"},
		{"bad log level", []string{"--log-level", "loud"}, `--log-level "loud"`},
		{"session lifetime below 1m", []string{"--session-lifetime", "59s"}, "--session-lifetime must be at least 1m"},
		{"idle stop below 1m", []string{"--idle-stop", "59s"}, "--idle-stop must be 0 (off) or at least 1m"},
		{"negative idle stop", []string{"--idle-stop", "-1h"}, "--idle-stop must be 0 (off) or at least 1m"},
		{"idle stop without a unit", []string{"--idle-stop", "30"}, `invalid value "30" for flag -idle-stop`},
		{"listen without port", []string{"--listen", "localhost"}, `--listen "localhost"`},
		{"unknown flag", []string{"--bogus"}, "flag provided but not defined"},
		{"extra argument", []string{"extra"}, `unexpected argument "extra"`},
		{"relative clone CA file", []string{"--clone-ca-file", "ca.pem"}, `--clone-ca-file: "ca.pem" is not an absolute path`},
		{"missing clone CA file", []string{"--clone-ca-file", "/nonexistent/ca.pem"}, "--clone-ca-file: open /nonexistent/ca.pem"},
		{"clone CA file without a certificate", []string{"--clone-ca-file", os.DevNull}, "--clone-ca-file: /dev/null holds no PEM certificate"},
		{"bad trusted proxy", []string{"--trusted-proxies", "10.0.0.0/8,proxy.local"}, `"proxy.local" is neither an IP address nor a CIDR prefix`},
		{"metrics on a non-loopback address without TLS", []string{"--metrics-listen", "0.0.0.0:0"}, "refusing metrics on 0.0.0.0:0 without TLS"},
		{"metrics on all interfaces without TLS", []string{"--metrics-listen", ":0"}, "refusing metrics on :0 without TLS"},
		{"metrics off loopback even with insecure HTTP allowed", []string{"--allow-insecure-http", "--metrics-listen", "[::]:0"}, "refusing metrics"},
		{"metrics without port", []string{"--metrics-listen", "localhost"}, `--metrics-listen "localhost"`},
		{"ACME and a certificate file", []string{"--acme-domain", "hub.example.com", "--tls-cert", "c.pem", "--tls-key", "k.pem"}, "--acme-domain and --tls-cert exclude each other"},
		{"ACME domain of one label", []string{"--acme-domain", "hub"}, `--acme-domain: "hub" has a single label`},
		{"ACME domain with a port", []string{"--acme-domain", "hub.example.com:443"}, "--acme-domain: "},
		{"ACME wildcard", []string{"--acme-domain", "*.example.com"}, "--acme-domain: "},
		{"ACME directory over HTTP", []string{"--acme-domain", "hub.example.com", "--acme-directory", "http://ca.example/dir"}, "want an https:// URL"},
		{"ACME email with a name", []string{"--acme-domain", "hub.example.com", "--acme-email", "Ann <ann@example.com>"}, "want a bare address"},
		{"relative ACME CA file", []string{"--acme-domain", "hub.example.com", "--acme-ca-file", "ca.pem"}, `--acme-ca-file: "ca.pem" is not an absolute path`},
		{"ACME email without a domain", []string{"--acme-email", "ann@example.com"}, "--acme-email needs --acme-domain"},
		{"ACME directory without a domain", []string{"--acme-directory", "https://ca.example/dir"}, "--acme-directory needs --acme-domain"},
		{"public URL under a path", []string{"--public-url", "https://hub.example/wharf"}, "the Hub cannot be served under a path"},
		{"public URL with a query", []string{"--public-url", "https://hub.example/?a=1"}, "the Hub cannot be served under a path"},
		{"public URL with a password, never echoed", []string{"--public-url", "https://ann:s3cret@hub.example"}, `"https://ann:xxxxx@hub.example": a public URL holds no user or password`},
		{"public URL of another scheme", []string{"--public-url", "ftp://hub.example"}, "want https://HOST"},
		{"public URL without a host", []string{"--public-url", "https://"}, "no host"},
		{"public URL on a public plain-HTTP listener without its proxies", []string{"--listen", "0.0.0.0:0", "--allow-insecure-http", "--public-url", "https://hub.example"}, "name the reverse proxy's addresses with --trusted-proxies"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			dir := stateDir(t)
			var stdout bytes.Buffer
			args := append([]string{"serve", "--listen", "127.0.0.1:0", "--state-dir", dir}, tc.args...)
			err := run(testContext(t), args, envOf(nil), nil, &stdout, new(bytes.Buffer))
			is.True(err != nil)                             // refused
			is.True(strings.Contains(err.Error(), tc.want)) // with a clear message
			is.Equal(stdout.Len(), 0)                       // no URL printed
			_, err = os.Stat(dir)
			is.True(errors.Is(err, os.ErrNotExist)) // refused before touching the state directory
		})
	}

	for _, tc := range []struct {
		name string
		mode os.FileMode
		want string
	}{
		{"group-readable state dir", 0o750, "chmod 700"},
		{"world-readable state dir", 0o704, "chmod 700"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			dir := stateDir(t)
			is.NoErr(os.Mkdir(dir, 0o700))   // state dir made
			is.NoErr(os.Chmod(dir, tc.mode)) // and opened to others
			args := []string{"serve", "--listen", "127.0.0.1:0", "--state-dir", dir}
			err := run(testContext(t), args, envOf(nil), nil, new(bytes.Buffer), new(bytes.Buffer))
			is.True(err != nil && strings.Contains(err.Error(), tc.want)) // refused, naming the fix
			_, err = os.Stat(filepath.Join(dir, "wharf.db"))
			is.True(errors.Is(err, os.ErrNotExist)) // no database created there
		})
	}

	t.Run("allow-insecure-http overrides", func(t *testing.T) {
		is := is.New(t)
		ctx := testContext(t)
		d := startServe(ctx, t, nil, stateDir(t), "--listen", "0.0.0.0:0", "--allow-insecure-http")
		is.True(strings.HasPrefix(d.url, "http://0.0.0.0:")) // serves plain HTTP on all interfaces
		name, _, _ := firstPassword(d.stderr.String())
		is.Equal(name, "admin") // with no $USER, the first user is admin
		is.NoErr(d.stop())      // and stops cleanly
	})
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key,
// and returns their paths and a pool trusting the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "wharf test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	certFile, keyFile = filepath.Join(tmp, "cert.pem"), filepath.Join(tmp, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return certFile, keyFile, roots
}

func TestServeTLS(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := testContext(t)
	certFile, keyFile, roots := selfSigned(t)
	d := startServe(ctx, t, map[string]string{"USER": "ann"}, stateDir(t), "--tls-cert", certFile, "--tls-key", keyFile)
	is.True(strings.HasPrefix(d.url, "https://127.0.0.1:")) // the URL is HTTPS

	_, password, _ := firstPassword(d.stderr.String())
	resp, s := login(ctx, t, newClient(t, roots), d.url, "ann", password)
	is.Equal(resp.StatusCode, http.StatusOK) // login over HTTPS works
	ck := deviceSessionCookie(resp, "wharf_hub_"+d.port)
	is.True(ck != nil)              // the cookie is named after the port
	is.Equal(ck.Value, s.SessionID) // and holds the session
	is.True(ck.Secure)              // Secure over HTTPS
	is.True(ck.HttpOnly)            // and HttpOnly
	is.NoErr(d.stop())              // the TLS daemon stops cleanly
}

// TestServeTrustedProxies shows the flag reaches the login limiter: from a
// trusted proxy each forwarded client has its own failure budget; without
// the flag the header is ignored and one peer has one budget.
func TestServeTrustedProxies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		extra []string
		want  int // status of the sixth failed login, each claiming a new address
	}{
		{"header ignored by default", nil, http.StatusTooManyRequests},
		{"loopback proxy trusted", []string{"--trusted-proxies", "127.0.0.1, ::1"}, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			ctx := testContext(t)
			d := startServe(ctx, t, map[string]string{"USER": "ann"}, stateDir(t), tc.extra...)
			c := newClient(t, nil)
			status := 0
			for i := range 6 {
				req, err := http.NewRequestWithContext(ctx, "POST", d.url+"login",
					strings.NewReader(`{"name":"ann","password":"wrong password"}`))
				is.NoErr(err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Forwarded-For", fmt.Sprintf("192.0.2.%d", i))
				resp, err := c.Do(req)
				is.NoErr(err)
				resp.Body.Close()
				status = resp.StatusCode
			}
			is.Equal(status, tc.want) // the sixth failure
		})
	}
}
