package main

// The flags of wharf serve: their definitions, the values they take and
// the checks they pass together before anything is opened. Each is also
// an environment variable (config.go).

import (
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/mail"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/adapters/statedir"
	"github.com/wharfhub/wharf/hub/service"
)

// serveFlags are the settings of wharf serve, parsed and checked together.
type serveFlags struct {
	listen, stateDir, tlsCert, tlsKey, logLevel, logFormat string
	cloneCAFile, sshConfig                                 string
	pushContact, pushCAFile                                string
	pushHosts                                              []string
	sessionLifetime, idleStop                              time.Duration
	allowInsecureHTTP, printConfig                         bool
	trustedProxies                                         []netip.Prefix
	publicHosts                                            []string
	agents                                                 map[string][]string
	publicURL                                              *url.URL
	metricsListen                                          string
	acmeDomain, acmeEmail, acmeDirectory, acmeCAFile       string

	fs   *flag.FlagSet     // the parsed flags, for --print-config
	from map[string]origin // where each flag's value came from
}

// parseServe reads serve's flags, each also settable by its environment
// variable (config.go), and checks them together.
func parseServe(args []string, getenv func(string) string, stderr io.Writer) (serveFlags, error) {
	var f serveFlags
	fs := flag.NewFlagSet("wharf serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: wharf serve [flags]\n\nEvery flag may also be set by its environment variable, "+
			"WHARF_ and the name in capitals\n(--state-dir: WHARF_STATE_DIR); a flag given here wins.\n\n")
		fs.PrintDefaults()
	}
	defState, _ := statedir.Default(getenv)
	fs.StringVar(&f.listen, "listen", "127.0.0.1:4700", "`address` to listen on; non-loopback needs TLS")
	fs.StringVar(&f.stateDir, "state-dir", defState, "private state `directory` (mode 0700)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate `file` (PEM); serve HTTPS")
	fs.StringVar(&f.tlsKey, "tls-key", "", "TLS private key `file` (PEM)")
	fs.DurationVar(&f.sessionLifetime, "session-lifetime", 30*24*time.Hour, "absolute lifetime of a device session")
	fs.StringVar(&f.logLevel, "log-level", "info", "log `level`: debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "text", "log `format`: text (logfmt) or json, one object per line")
	fs.StringVar(&f.cloneCAFile, "clone-ca-file", "", "PEM `file` of the certificate authorities HTTPS clones trust "+
		"instead of the system's (a Git host with a private CA)")
	fs.StringVar(&f.sshConfig, "ssh-config", "", "ssh_config `file` (absolute) that reaches the hosts workspaces live on, "+
		"instead of your own ~/.ssh/config")
	fs.BoolVar(&f.allowInsecureHTTP, "allow-insecure-http", false, "allow plain HTTP on a non-loopback address")
	fs.StringVar(&f.pushContact, "push-contact", "", "the operator's `address` push services "+
		"may write to (mailto: or https:), which turns Web Push notifications on")
	fs.StringVar(&f.pushCAFile, "push-ca-file", "", "PEM `file` of the certificate authorities push services are "+
		"trusted with instead of the system's (a private push service)")
	fs.Var(listValue{&f.pushHosts, true}, "push-host", "comma-separated `hosts` (host or host:port) a push subscription "+
		"may name besides the real push services' (a private push service)")
	fs.Var(prefixValue{&f.trustedProxies}, "trusted-proxies", "comma-separated `addresses` or CIDR prefixes of reverse "+
		"proxies whose X-Forwarded-For names the client (default none: the header is ignored)")
	fs.Var(listValue{&f.publicHosts, false}, "public-host", "comma-separated host `names` clients reach the Hub by, "+
		"besides IP addresses, localhost and the TLS certificate's names (a name behind a reverse proxy); requests "+
		"naming other hosts answer 421")
	fs.Var(agentValue{&f.agents}, "agent", "a coding agent's command, `ID=COMMAND`: a known agent's (claude, codex, "+
		"gemini, opencode) or a new agent's; COMMAND is split at spaces, or is a JSON array of strings; repeatable "+
		"(in $WHARF_AGENT, one per line)")
	fs.DurationVar(&f.idleStop, "idle-stop", 0, "stop a workspace session idle this `long`: no live stream on its "+
		"workspace, no agent turn or background work, nothing awaiting an answer (0: never; else at least 1m)")
	fs.BoolVar(&f.printConfig, "print-config", false, "print the effective settings, each with where it came from, and exit")
	fs.Var(urlValue{&f.publicURL}, "public-url", "the `URL` people type to reach the Hub through a reverse proxy (https://hub.example.ts.net): "+
		"allows its host, gives its requests its scheme (Secure cookies, HSTS, the origin check) and, when listening on "+
		"loopback, trusts the local proxy's X-Forwarded-For, so clients keep their own request caps and login limits")
	fs.StringVar(&f.metricsListen, "metrics-listen", "", "`address` to serve Prometheus metrics (/metrics) and the probes "+
		"(/healthz, /readyz) on; off by default; non-loopback needs TLS (served with --tls-cert)")
	fs.StringVar(&f.acmeDomain, "acme-domain", "", "serve HTTPS with a certificate for this DNS `name` from an ACME CA "+
		"(Let's Encrypt), obtained and renewed by the Hub and cached in the state directory; the name must reach this Hub "+
		"on port 443 (TLS-ALPN-01); setting it accepts the CA's terms of service")
	fs.StringVar(&f.acmeEmail, "acme-email", "", "contact `address` the ACME CA may write to about the certificate")
	fs.StringVar(&f.acmeDirectory, "acme-directory", daemon.LetsEncrypt, "the ACME CA's directory `URL` (https://)")
	fs.StringVar(&f.acmeCAFile, "acme-ca-file", "", "PEM `file` of the certificate authorities the ACME directory's "+
		"HTTPS is trusted with instead of the system's (a private ACME server)")
	from, err := parseWithEnv(fs, args, getenv, []string{"agent"}, nil)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return f, err
		}
		var ue usageError
		if errors.As(err, &ue) {
			return f, err
		}
		return f, usageError{err}
	}
	f.fs, f.from = fs, from
	if fs.NArg() > 0 {
		return f, usagef("serve: unexpected argument %q", fs.Arg(0))
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return f, usagef("serve: --tls-cert and --tls-key go together")
	}
	if f.cloneCAFile != "" {
		if err := checkCAFile(f.cloneCAFile); err != nil {
			return f, usagef("serve: --clone-ca-file: %v", err)
		}
	}
	if err := checkSSHConfig(f.sshConfig); err != nil {
		return f, usagef("serve: --ssh-config: %v", err)
	}
	if f.pushCAFile != "" {
		if err := checkCAFile(f.pushCAFile); err != nil {
			return f, usagef("serve: --push-ca-file: %v", err)
		}
	}
	if err := checkACME(&f); err != nil {
		return f, err
	}
	if f.sessionLifetime < time.Minute {
		return f, usagef("serve: --session-lifetime must be at least 1m")
	}
	if f.idleStop != 0 && f.idleStop < service.MinIdleStop {
		return f, usagef("serve: --idle-stop must be 0 (off) or at least 1m") // service.MinIdleStop
	}
	if f.stateDir == "" {
		return f, usagef("serve: no state directory; pass --state-dir")
	}
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return f, usagef("serve: --listen %q: %v", f.listen, err)
	}
	if f.tlsCert == "" && f.acmeDomain == "" && !f.allowInsecureHTTP && !isLoopback(host) {
		return f, usagef("serve: refusing to listen on %s without TLS: pass --tls-cert and --tls-key or --acme-domain, "+
			"or bind a loopback address behind your own HTTPS proxy (--allow-insecure-http overrides)", f.listen)
	}
	if f.publicURL != nil && len(f.trustedProxies) == 0 {
		switch {
		case isLoopback(host):
			// Only local processes can connect, and the proxy is one.
			f.trustedProxies = loopbackPrefixes
			f.from["trusted-proxies"] = "implied by --public-url on a loopback --listen"
		case f.tlsCert == "" && f.acmeDomain == "":
			return f, usagef("serve: --public-url with --listen %s, which is not loopback: name the reverse proxy's "+
				"addresses with --trusted-proxies (or listen on 127.0.0.1 with the proxy on this machine)", f.listen)
		}
		// With its own TLS on a public address the Hub is reached
		// directly: no proxy to trust.
	}
	if f.metricsListen != "" {
		mhost, _, err := net.SplitHostPort(f.metricsListen)
		if err != nil {
			return f, usagef("serve: --metrics-listen %q: %v", f.metricsListen, err)
		}
		// Metrics need no session: off loopback, only over TLS (and no
		// --allow-insecure-http for them; nothing is gained by it).
		if f.tlsCert == "" && !isLoopback(mhost) {
			return f, usagef("serve: refusing metrics on %s without TLS: bind a loopback address (127.0.0.1:9464), "+
				"or pass --tls-cert and --tls-key to serve them over HTTPS", f.metricsListen)
		}
	}
	return f, nil
}

// urlValue is --public-url.
type urlValue struct{ u **url.URL }

func (v urlValue) String() string {
	if v.u == nil || *v.u == nil {
		return ""
	}
	return (*v.u).String()
}

func (v urlValue) Set(s string) (err error) {
	*v.u, err = daemon.ParsePublicURL(s)
	return err
}

// loopbackPrefixes are the peers --public-url trusts on a loopback
// listener.
var loopbackPrefixes = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// parseAgent reads an --agent value: ID=COMMAND, the command a JSON array
// of strings or words split at spaces. The id holds no ':' (it names
// conversations `<id>:<session>`).
func parseAgent(v string) (string, []string, error) {
	id, cmd, ok := strings.Cut(v, "=")
	var argv []string
	switch {
	case !ok || strings.TrimSpace(id) == "" || strings.ContainsAny(id, ": \t"):
		return "", nil, fmt.Errorf("want ID=COMMAND with an id without spaces or ':'")
	case strings.HasPrefix(strings.TrimSpace(cmd), "["):
		if err := json.Unmarshal([]byte(cmd), &argv); err != nil {
			return "", nil, fmt.Errorf("agent %s: the command is not a JSON array of strings", id)
		}
	default:
		argv = strings.Fields(cmd)
	}
	if len(argv) == 0 || argv[0] == "" {
		return "", nil, fmt.Errorf("agent %s: no command", id)
	}
	return id, argv, nil
}

// parsePrefixes reads a comma-separated list of IP addresses and CIDR
// prefixes; an address stands for itself alone.
func parsePrefixes(list string) ([]netip.Prefix, error) {
	var ps []netip.Prefix
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if p, err := netip.ParsePrefix(item); err == nil {
			ps = append(ps, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR prefix", item)
		}
		ps = append(ps, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return ps, nil
}

// listenHost is the host of a listen address, which clients may name.
func listenHost(addr string) string {
	host, _, _ := net.SplitHostPort(addr)
	return host
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkACME checks the --acme-* flags together, normalizing the domain
// to the name the certificate is for.
func checkACME(f *serveFlags) error {
	if f.acmeDomain == "" {
		for _, name := range []string{"acme-email", "acme-directory", "acme-ca-file"} {
			if f.from[name] != fromDefault {
				return usagef("serve: --%s needs --acme-domain", name)
			}
		}
		return nil
	}
	if f.tlsCert != "" {
		return usagef("serve: --acme-domain and --tls-cert exclude each other: the certificate comes from one or the other")
	}
	domain, err := daemon.NormalizeDomain(f.acmeDomain)
	if err != nil {
		return usagef("serve: --acme-domain: %v", err)
	}
	f.acmeDomain = domain
	if u, err := url.Parse(f.acmeDirectory); err != nil || u.Scheme != "https" || u.Host == "" {
		return usagef("serve: --acme-directory %q: want an https:// URL", f.acmeDirectory)
	}
	if f.acmeEmail != "" {
		if a, err := mail.ParseAddress(f.acmeEmail); err != nil || a.Address != f.acmeEmail {
			return usagef("serve: --acme-email %q: want a bare address (ops@example.com)", f.acmeEmail)
		}
	}
	if f.acmeCAFile != "" {
		if err := checkCAFile(f.acmeCAFile); err != nil {
			return usagef("serve: --acme-ca-file: %v", err)
		}
	}
	return nil
}

// checkCAFile checks that path holds PEM certificates, so a typo fails
// at start rather than in every HTTPS clone. It must be absolute: git
// runs in another folder.
func checkCAFile(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%q is not an absolute path", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !x509.NewCertPool().AppendCertsFromPEM(b) {
		return fmt.Errorf("%s holds no PEM certificate", path)
	}
	return nil
}
