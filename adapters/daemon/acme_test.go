package daemon

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// The domain's failures are logged once per episode: the first failure,
// then nothing until a certificate is served again, which is logged and
// ends the episode; the next failure starts a new one. A handshake that
// only waited on a failing order starts none: its error gives no cause.
func TestACMEFailuresAreLoggedOncePerEpisode(t *testing.T) {
	is := is.New(t)
	var out bytes.Buffer
	a := &acmeCerts{domain: "hub.example.com", dir: LetsEncrypt, log: slog.New(slog.NewTextHandler(&out, nil))}
	refused := errors.New("connection refused")
	for _, step := range []struct {
		err  error
		want string // the line logged, "" for none
	}{
		{errors.New("acme/autocert: missing certificate"), ""}, // a handshake that waited on the order, first
		{refused, "level=ERROR msg=\"ACME: cannot obtain or renew"},
		{refused, ""},
		{errors.New("acme/autocert: missing certificate"), ""},
		{nil, "level=INFO msg=\"ACME: serving a certificate"},
		{nil, ""},
		{refused, "level=ERROR msg=\"ACME: cannot obtain or renew"},
		{nil, "level=INFO msg=\"ACME: serving a certificate"},
	} {
		out.Reset()
		a.report(step.err)
		if step.want == "" {
			is.Equal(out.String(), "") // nothing new to say
			continue
		}
		is.Equal(strings.Count(out.String(), "\n"), 1)                    // one line
		is.True(strings.Contains(out.String(), step.want))                // saying what changed
		is.True(strings.Contains(out.String(), "domain=hub.example.com")) // naming the domain
	}
}

// The cache writes files 0600 through a synced temporary file, leaves no
// temporary file behind, and reads back what it wrote.
func TestACMECacheWritesPrivateFiles(t *testing.T) {
	is := is.New(t)
	dir := filepath.Join(t.TempDir(), "acme")
	is.NoErr(privateDir(dir)) // made
	c := newCache(dir)
	ctx := context.Background()
	is.NoErr(c.Put(ctx, "acme_account+key", []byte("key one")))
	is.NoErr(c.Put(ctx, "acme_account+key", []byte("key two"))) // replaced whole
	got, err := c.Get(ctx, "acme_account+key")
	is.NoErr(err)                    // read back
	is.Equal(string(got), "key two") // the last write
	entries, err := os.ReadDir(dir)
	is.NoErr(err)
	is.Equal(len(entries), 1) // no temporary file left
	fi, err := os.Stat(filepath.Join(dir, "acme_account+key"))
	is.NoErr(err)
	is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // readable by the owner alone
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	is.True(errors.Is(c.Put(cancelled, "hub.example.com", []byte("cert")), context.Canceled)) // a cancelled write writes nothing
	_, err = os.Stat(filepath.Join(dir, "hub.example.com"))
	is.True(errors.Is(err, os.ErrNotExist)) // nothing
}

// The cache directory is made 0700 and refused when open to others or
// not a directory, as the keys in it would be.
func TestACMECacheDirectoryIsPrivate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(dir string) error
		want    string // "" for accepted
	}{
		{"made when missing", func(string) error { return nil }, ""},
		{"kept when private", func(dir string) error { return os.Mkdir(dir, 0o700) }, ""},
		{"refused when group-readable", func(dir string) error { return mkdirMode(dir, 0o750) }, "chmod 700"},
		{"refused when a file", func(dir string) error { return os.WriteFile(dir, nil, 0o600) }, "not a directory"},
		{"refused when a link", func(dir string) error { return os.Symlink(t.TempDir(), dir) }, "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			dir := filepath.Join(t.TempDir(), "acme")
			is.NoErr(tc.prepare(dir)) // prepared
			err := privateDir(dir)
			if tc.want == "" {
				is.NoErr(err) // accepted
				fi, err := os.Lstat(dir)
				is.NoErr(err)
				is.Equal(fi.Mode().Perm(), os.FileMode(0o700)) // private
				return
			}
			is.True(err != nil && strings.Contains(err.Error(), tc.want)) // refused, saying why
		})
	}
}

func mkdirMode(dir string, mode os.FileMode) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, mode)
}

// Domains are normalized to the lower-case ASCII name a certificate is
// for; what cannot have a certificate is refused.
func TestACMEDomainsAreNormalized(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"hub.example.com", "hub.example.com", ""},
		{"Hub.Example.COM.", "hub.example.com", ""},
		{"bücher.example", "xn--bcher-kva.example", ""},
		{"hub", "", "single label"},
		{"hub.example.com:443", "", "not a DNS name"},
		{"*.example.com", "", "not a DNS name"},
		{"", "", "not a DNS name"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			is := is.New(t)
			got, err := NormalizeDomain(tc.in)
			if tc.err != "" {
				is.True(err != nil && strings.Contains(err.Error(), tc.err)) // refused, saying why
				return
			}
			is.NoErr(err)          // accepted
			is.Equal(got, tc.want) // normalized
		})
	}
}

// A certificate whose renewal is overdue (a third of autocert's renewal
// window gone by without one) is a problem to report, well before it
// expires; a fresh one, or one inside the window's start, is not.
func TestACMEOverdueRenewalIsAProblem(t *testing.T) {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, tc := range []struct {
		name     string
		lifetime time.Duration
		at       time.Duration // after NotBefore
		overdue  bool
	}{
		{"90 days, fresh", 90 * day, day, false},
		{"90 days, renewal just due", 90 * day, 61 * day, false},
		{"90 days, renewals failing for 10 days", 90*day + time.Hour, 70*day + 2*time.Hour, true},
		{"6 days, fresh", 6 * day, day, false},
		{"6 days, renewals failing since a day", 6 * day, 5 * day, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			a := &acmeCerts{now: func() time.Time { return start.Add(tc.at) }}
			cert := &tls.Certificate{Leaf: &x509.Certificate{NotBefore: start, NotAfter: start.Add(tc.lifetime)}}
			err := a.problem(cert, nil)
			is.Equal(err != nil, tc.overdue) // overdue or not
			if tc.overdue {
				is.True(strings.Contains(err.Error(), "not renewed and expires at "+start.Add(tc.lifetime).Format(time.RFC3339))) // saying when it expires
			}
		})
	}
	is := is.New(t)
	refused := errors.New("connection refused")
	is.Equal((&acmeCerts{now: time.Now}).problem(nil, refused), refused) // no certificate: the error itself
}
