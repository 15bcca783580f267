package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
	"golang.org/x/net/idna"
)

// HTTPS without a certificate file: with ACME.Domain set, the daemon asks
// an ACME certificate authority (RFC 8555; Let's Encrypt by default) for a
// certificate for that one name and renews it before it expires
// (golang.org/x/crypto/acme/autocert). The CA checks that the name is ours
// with the TLS-ALPN-01 challenge only: it connects to the name on port
// 443 and the Hub's own listener answers, so no port 80 listener is
// needed, but the Hub itself must be reachable on 443.
//
// The account key and each certificate's private key are kept in the
// clear in <state>/acme (0700; files 0600, written durably), like
// hub.key and push.key beside the database: whoever reads the state
// directory is the operator anyway. They are never logged.
//
// A certificate that cannot be obtained does not stop the daemon: the
// failure is logged once per episode (until a certificate is served
// again), and every handshake naming the domain fails meanwhile. A
// renewal that keeps failing is logged the same way, well before the
// old certificate expires. Serve
// asks for the certificate as soon as it listens, so a misconfiguration
// shows in the log at start, not at the first phone's visit.

// ACME asks an ACME certificate authority for the certificate Serve
// presents. The zero value (no Domain) leaves it off.
type ACME struct {
	// Domain is the one DNS name the certificate is for (the host
	// policy: no other name gets one) and that clients use. It must
	// resolve to this machine, and port 443 on it must reach the Hub.
	Domain string
	// Email is the contact the CA may write to about the certificate
	// (expiry, revocation); empty gives none.
	Email string
	// Directory is the CA's directory URL; empty is LetsEncrypt.
	Directory string
	// CAFile, when set, is a PEM file of the certificate authorities the
	// directory's own HTTPS is trusted with instead of the system's: a
	// private ACME server (or a test's).
	CAFile string
}

// LetsEncrypt is Let's Encrypt's production directory, the default CA.
const LetsEncrypt = autocert.DefaultACMEDirectory

// acmeDirName is the cache directory inside the state directory.
const acmeDirName = "acme"

// NormalizeDomain returns name as the ASCII (punycode), lower-case DNS
// name the certificate is asked for, or an error saying why it cannot
// have one: an address, a port, a wildcard or a name of one label.
func NormalizeDomain(name string) (string, error) {
	n, err := idna.Lookup.ToASCII(strings.TrimSuffix(name, "."))
	switch {
	case err != nil:
		return "", fmt.Errorf("%q is not a DNS name: %v", name, err)
	case n == "" || strings.ContainsAny(n, ":*/ "):
		return "", fmt.Errorf("%q is not a DNS name (no port, address or wildcard)", name)
	case !strings.Contains(n, "."):
		return "", fmt.Errorf("%q has a single label; a certificate needs a full name (hub.example.com)", name)
	}
	return n, nil
}

// acmeCerts obtains, caches and renews the domain's certificate and
// reports what becomes of it.
type acmeCerts struct {
	domain string
	dir    string // the CA's directory URL
	m      *autocert.Manager
	log    *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	failing bool // the last attempt for the domain failed and was logged
	served  bool // a certificate for the domain was served, and logged
}

// newACME prepares the certificates of cfg, cached in cacheDir (made
// 0700 when missing, refused when open to others).
func newACME(cfg ACME, cacheDir string, log *slog.Logger) (*acmeCerts, error) {
	domain, err := NormalizeDomain(cfg.Domain)
	if err != nil {
		return nil, fmt.Errorf("ACME domain: %w", err)
	}
	if err := privateDir(cacheDir); err != nil {
		return nil, fmt.Errorf("ACME cache: %w", err)
	}
	client, err := caClient(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("ACME CA file: %w", err)
	}
	dir := cfg.Directory
	if dir == "" {
		dir = LetsEncrypt
	}
	a := &acmeCerts{domain: domain, dir: dir, log: log, now: time.Now}
	a.m = &autocert.Manager{
		// Passing a domain is how the operator accepts the CA's terms.
		Prompt:     autocert.AcceptTOS,
		Cache:      newCache(cacheDir),
		HostPolicy: autocert.HostWhitelist(domain),
		Email:      cfg.Email,
		Client:     &acme.Client{DirectoryURL: dir, HTTPClient: client, UserAgent: "wharf"},
	}
	return a, nil
}

// tlsConfig is the listener's configuration: the manager's certificates
// (and TLS-ALPN-01 answers), TLS 1.2 at least, HTTP/2 and HTTP/1.1.
func (a *acmeCerts) tlsConfig() *tls.Config {
	c := a.m.TLSConfig()
	c.MinVersion = tls.VersionTLS12
	c.NextProtos = []string{"h2", "http/1.1", acme.ALPNProto}
	c.GetCertificate = a.getCertificate
	return c
}

// getCertificate is the manager's, reporting the domain's failures and
// recoveries. The CA's challenge connections (ALPN acme-tls/1 alone) and
// other names (refused by the host policy; http.Server logs each failed
// handshake, throttled) are not the domain's episodes.
func (a *acmeCerts) getCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	cert, err := a.m.GetCertificate(hello)
	challenge := len(hello.SupportedProtos) == 1 && hello.SupportedProtos[0] == acme.ALPNProto
	if name, nerr := NormalizeDomain(hello.ServerName); !challenge && nerr == nil && name == a.domain {
		a.report(a.problem(cert, err))
	}
	return cert, err
}

// problem is what is wrong with the domain's certificate: err, when
// there is none; else an error when its renewal is overdue. autocert
// renews a certificate the lesser of 30 days and a third of its lifetime
// before it expires, retrying every half hour or so, and keeps serving
// the old one meanwhile, silently: once a third of that window has
// passed, the renewals are failing and the operator has until NotAfter.
func (a *acmeCerts) problem(cert *tls.Certificate, err error) error {
	if err != nil || cert == nil || cert.Leaf == nil {
		return err
	}
	leaf := cert.Leaf
	window := min(30*24*time.Hour, leaf.NotAfter.Sub(leaf.NotBefore)/3)
	if a.now().After(leaf.NotAfter.Add(-window * 2 / 3)) {
		return fmt.Errorf("the certificate was not renewed and expires at %s", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return nil
}

// errOrderFailedRecently is autocert's error for a handshake that waited
// on another's order, or came within a minute of a failed one (autocert
// keeps the failed order's empty state that long). It says nothing of
// why: reported first, as a handshake racing the start's warm-up did, it
// would hide the cause from the episode's one line.
const errOrderFailedRecently = "acme/autocert: missing certificate"

// report logs the first failure of an episode and the end of one (or the
// first certificate served). err never holds a key: autocert's errors
// name the domain, the CA's URLs and the CA's problem documents.
func (a *acmeCerts) report(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case err != nil && err.Error() == errOrderFailedRecently:
		// Not a cause: the handshake that ran the order reports why.
	case err != nil && !a.failing:
		a.failing = true
		a.log.Error("ACME: cannot obtain or renew the domain's certificate; without one, TLS handshakes naming the "+
			"domain fail (the CA must reach this Hub on port 443 at that name; retried at the next handshake, "+
			"at most once a minute, and renewals every half hour)",
			"domain", a.domain, "directory", a.dir, "err", err)
	case err == nil && (a.failing || !a.served):
		a.failing, a.served = false, true
		a.log.Info("ACME: serving a certificate for the domain", "domain", a.domain, "directory", a.dir)
	}
}

// warmUp asks for the domain's certificate as a client naming it would,
// from the cache or the CA, so the first visitor does not wait for an
// order and a failure is logged at start.
func (a *acmeCerts) warmUp() {
	// An ECDSA-capable hello: the certificate browsers get.
	a.getCertificate(&tls.ClientHelloInfo{ServerName: a.domain, SupportedProtos: []string{"h2", "http/1.1"},
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}})
}

// durableCache is autocert.DirCache (0700 directory, 0600 files, reads
// and deletes as is) whose writes reach the disk before they are
// renamed into place: an account key half-written at a crash would stop
// every later order ("invalid account key found in cache") until the
// operator deleted it.
type durableCache struct{ autocert.DirCache }

// newCache is the cache in dir, which privateDir made.
func newCache(dir string) durableCache { return durableCache{autocert.DirCache(dir)} }

// Put writes data to the file name through a synced temporary file.
func (c durableCache) Put(ctx context.Context, name string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := string(c.DirCache)
	f, err := os.CreateTemp(dir, ".put-*") // mode 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// Keys hold no path separator: autocert's cache keys are names like
	// "acme_account+key" and "hub.example.com".
	if err := os.Rename(tmp, filepath.Join(dir, filepath.Clean("/"+name))); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// privateDir creates dir with mode 0700 when missing and checks that it is
// a real directory closed to group and others: it holds private keys.
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%s is open to group or others (mode %v); chmod 700 it", dir, fi.Mode().Perm())
	}
	return nil
}
