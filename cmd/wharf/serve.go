package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/term"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// newLogger makes the daemon's logger: slog's text (logfmt) or JSON
// handler on w at level.
func newLogger(level, format string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("serve: --log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usagef("serve: --log-format %q: want text or json", format)
}

// serve runs the daemon until ctx is cancelled, then shuts down gracefully:
// it stops accepting, ends open streams, waits for requests in flight (a
// bounded time) and closes the database.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	f, err := parseServe(args, getenv, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(f.logLevel, f.logFormat, stderr)
	if err != nil {
		return err
	}
	if f.printConfig {
		return printConfig(stdout, f.fs, f.from)
	}
	warnToolchain(stderr)
	var tlsConfig *tls.Config
	if f.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return fmt.Errorf("serve: TLS: %v", err)
		}
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	}

	var adapt func(*service.Ports)
	if testFS != nil || testStore != nil {
		adapt = func(p *service.Ports) {
			if testFS != nil {
				p.FS = testFS(p.FS)
			}
			if testStore != nil {
				p.Store = testStore(p.Store)
			}
		}
	}
	d, err := daemon.Open(ctx, daemon.Config{
		StateDir:       f.stateDir,
		Hub:            service.Config{Version: version(), DeviceSessionLifetime: f.sessionLifetime, PushHosts: f.pushHosts, IdleStop: f.idleStop},
		Logger:         log,
		TrustedProxies: f.trustedProxies,
		PublicURL:      f.publicURL,
		TLS:            tlsConfig,
		PublicHosts:    append(f.publicHosts, listenHost(f.listen)),
		AgentCommands:  f.agents,
		CloneCAFile:    f.cloneCAFile,
		SSH:            sshCommand(f.sshConfig),
		PushContact:    f.pushContact,
		PushCAFile:     f.pushCAFile,
		ACME:           daemon.ACME{Domain: f.acmeDomain, Email: f.acmeEmail, Directory: f.acmeDirectory, CAFile: f.acmeCAFile},
		Adapt:          adapt,
		Metrics:        f.metricsListen != "",
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	// Close stops the workspace sessions; they keep their mark and start
	// again with the next serve.
	defer d.Close()

	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("serve: %v", err)
	}
	url := serveURL(f, tlsConfig != nil, ln.Addr())
	if f.publicURL != nil {
		url = f.publicURL.String() + "/" // what people type, not the proxy's upstream
	}

	var mln net.Listener
	if f.metricsListen != "" {
		if mln, err = net.Listen("tcp", f.metricsListen); err != nil {
			ln.Close()
			return fmt.Errorf("serve: --metrics-listen: %v", err)
		}
	}
	if err := firstUser(ctx, d.Hub(), getenv, url, d.Root(), stderr); err != nil {
		ln.Close()
		if mln != nil {
			mln.Close()
		}
		return err
	}
	// The metrics listener outlives the API's graceful shutdown, so its
	// /readyz answers 503 while the requests in flight end.
	metricsDone := make(chan struct{})
	mctx, stopMetrics := context.WithCancel(context.WithoutCancel(ctx))
	if mln != nil {
		scheme := "http" // served with the Hub's certificate file, never the ACME one
		if tlsConfig != nil {
			scheme = "https"
		}
		log.Info("serving metrics", "url", scheme+"://"+mln.Addr().String()+"/metrics")
		go func() {
			defer close(metricsDone)
			if err := d.ServeMetrics(mctx, mln); err != nil {
				log.Error("metrics are no longer served", "err", err)
			}
		}()
	} else {
		close(metricsDone)
	}
	defer func() { stopMetrics(); <-metricsDone }()
	fmt.Fprintln(stdout, url)
	log.Info("serving", "url", url, "listen", ln.Addr().String(), "state", d.Root(), "version", version())
	return d.Serve(ctx, ln, nil)
}

// serveURL is the Hub's address as printed: https://NAME[:port]/ with
// ACME (clients must name the domain), else the listen address's.
func serveURL(f serveFlags, tls bool, addr net.Addr) string {
	host, _, _ := net.SplitHostPort(f.listen)
	port := strconv.Itoa(addr.(*net.TCPAddr).Port)
	if a, ok := addr.(*net.TCPAddr); ok && host == "" {
		host = a.IP.String()
	}
	switch {
	case f.acmeDomain != "" && port == "443":
		return "https://" + f.acmeDomain + "/"
	case f.acmeDomain != "":
		return "https://" + net.JoinHostPort(f.acmeDomain, port) + "/"
	case tls:
		return "https://" + net.JoinHostPort(host, port) + "/"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// testFS, set only by this package's tests, wraps the file system so a test
// can crash the daemon in the middle of a folder change.
var testFS func(hub.FS) hub.FS

// testStore, set only by this package's tests, wraps the store so a test
// learns what the daemon journaled (push_harness_test.go).
var testStore func(hub.Store) hub.Store

// firstUser creates a user when there is none, named after $USER (else
// admin), and hands its password over once. On a terminal it is printed.
// Anywhere else (a pipe, a file, the systemd journal) a printed password
// would be kept in a log, so it goes into a 0600 file in the state
// directory instead, whose path is printed.
func firstUser(ctx context.Context, h *service.Hub, getenv func(string) string, url, stateDir string, stderr io.Writer) error {
	name := getenv("USER")
	if hub.ValidateUserName(name) != nil {
		name = "admin"
	}
	password, created, err := h.EnsureFirstUser(ctx, name)
	if err != nil || !created {
		return err
	}
	if isTerminal(stderr) {
		fmt.Fprintf(stderr, `
wharf: created the first user %q with password:

    %s

This password is shown only now. Open %s in a browser and
log in with it; change it with: wharf user passwd %s

`, name, password, url, name)
		return nil
	}
	path := filepath.Join(stateDir, firstPasswordFile)
	if err := writePrivate(path, password+"\n"); err != nil {
		return fmt.Errorf("serve: first user's password: %w", err)
	}
	fmt.Fprintf(stderr, `
wharf: created the first user %q; its password is in

    %s

(readable only by you; delete the file once you have the password). Log in
at %s with it, and change it with: wharf user passwd %s

`, name, path, url, name)
	return nil
}

// firstPasswordFile holds the first user's password when wharf serve does
// not run on a terminal.
const firstPasswordFile = "first-user-password"

// writePrivate writes data to a new file at path with mode 0600, replacing
// a file left by an earlier first start.
func writePrivate(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.WriteString(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
