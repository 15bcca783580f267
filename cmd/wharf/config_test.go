package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestEveryServeFlagHasItsEnvironmentVariable sets each flag through its
// variable alone and reads the effect back.
func TestEveryServeFlagHasItsEnvironmentVariable(t *testing.T) {
	ca, _, _ := selfSigned(t) // a PEM certificate file
	cases := []struct {
		env   string
		value string
		check func(*is.I, serveFlags)
	}{
		{"WHARF_LISTEN", "127.0.0.1:4800", func(is *is.I, f serveFlags) { is.Equal(f.listen, "127.0.0.1:4800") }},
		{"WHARF_STATE_DIR", "/srv/wharf", func(is *is.I, f serveFlags) { is.Equal(f.stateDir, "/srv/wharf") }},
		{"WHARF_SESSION_LIFETIME", "2h", func(is *is.I, f serveFlags) { is.Equal(f.sessionLifetime, 2*time.Hour) }},
		{"WHARF_LOG_LEVEL", "debug", func(is *is.I, f serveFlags) { is.Equal(f.logLevel, "debug") }},
		{"WHARF_LOG_FORMAT", "json", func(is *is.I, f serveFlags) { is.Equal(f.logFormat, "json") }},
		{"WHARF_CLONE_CA_FILE", ca, func(is *is.I, f serveFlags) { is.Equal(f.cloneCAFile, ca) }},
		{"WHARF_SSH_CONFIG", ca, func(is *is.I, f serveFlags) { is.Equal(f.sshConfig, ca) }},
		{"WHARF_ALLOW_INSECURE_HTTP", "true", func(is *is.I, f serveFlags) { is.True(f.allowInsecureHTTP) }},
		{"WHARF_PUSH_CONTACT", "mailto:ops@example.org", func(is *is.I, f serveFlags) { is.Equal(f.pushContact, "mailto:ops@example.org") }},
		{"WHARF_PUSH_CA_FILE", ca, func(is *is.I, f serveFlags) { is.Equal(f.pushCAFile, ca) }},
		{"WHARF_PUSH_HOST", "Push.Example:8443, other.example", func(is *is.I, f serveFlags) {
			is.Equal(f.pushHosts, []string{"push.example:8443", "other.example"})
		}},
		{"WHARF_TRUSTED_PROXIES", "127.0.0.1,10.0.0.0/8", func(is *is.I, f serveFlags) {
			is.Equal(f.trustedProxies, []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8")})
		}},
		{"WHARF_PUBLIC_HOST", "hub.example.ts.net", func(is *is.I, f serveFlags) { is.Equal(f.publicHosts, []string{"hub.example.ts.net"}) }},
		{"WHARF_AGENT", "x=prog --acp\ny=[\"my agent\",\"--stdio\"]", func(is *is.I, f serveFlags) {
			is.Equal(f.agents, map[string][]string{"x": {"prog", "--acp"}, "y": {"my agent", "--stdio"}})
		}},
		{"WHARF_IDLE_STOP", "2h", func(is *is.I, f serveFlags) { is.Equal(f.idleStop, 2*time.Hour) }},
		{"WHARF_PUBLIC_URL", "https://Hub.Example.ts.net", func(is *is.I, f serveFlags) {
			is.Equal(f.publicURL.String(), "https://hub.example.ts.net")
		}},
		{"WHARF_METRICS_LISTEN", "127.0.0.1:9464", func(is *is.I, f serveFlags) { is.Equal(f.metricsListen, "127.0.0.1:9464") }},
		{"WHARF_PRINT_CONFIG", "1", func(is *is.I, f serveFlags) { is.True(f.printConfig) }},
	}
	seen := map[string]bool{}
	t.Run("WHARF_TLS_CERT and WHARF_TLS_KEY", func(t *testing.T) {
		is := is.New(t)
		cert, key, _ := selfSigned(t)
		f, err := parseServe(nil, envOf(map[string]string{"HOME": t.TempDir(), "WHARF_TLS_CERT": cert, "WHARF_TLS_KEY": key}), io.Discard)
		is.NoErr(err)                                                // the pair is a valid setting
		is.Equal([]string{f.tlsCert, f.tlsKey}, []string{cert, key}) // read from the variables
	})
	seen["WHARF_TLS_CERT"], seen["WHARF_TLS_KEY"] = true, true
	t.Run("WHARF_ACME_DOMAIN and its companions", func(t *testing.T) {
		is := is.New(t)
		env := map[string]string{"HOME": t.TempDir(), "WHARF_ACME_DOMAIN": "Hub.Example.org", "WHARF_ACME_EMAIL": "ops@example.org",
			"WHARF_ACME_DIRECTORY": "https://ca.example.org/dir", "WHARF_ACME_CA_FILE": ca}
		f, err := parseServe(nil, envOf(env), io.Discard)
		is.NoErr(err) // the four are a valid setting (the companions alone are not: they need the domain)
		is.Equal([]string{f.acmeDomain, f.acmeEmail, f.acmeDirectory, f.acmeCAFile},
			[]string{"hub.example.org", "ops@example.org", "https://ca.example.org/dir", ca}) // read from the variables
		for _, name := range []string{"acme-domain", "acme-email", "acme-directory", "acme-ca-file"} {
			is.Equal(string(f.from[name]), "env "+envName(name)) // each from its variable
		}
	})
	for _, v := range []string{"WHARF_ACME_DOMAIN", "WHARF_ACME_EMAIL", "WHARF_ACME_DIRECTORY", "WHARF_ACME_CA_FILE"} {
		seen[v] = true
	}
	for _, c := range cases {
		seen[c.env] = true
		t.Run(c.env, func(t *testing.T) {
			is := is.New(t)
			env := map[string]string{"HOME": t.TempDir(), c.env: c.value}
			f, err := parseServe(nil, envOf(env), io.Discard)
			is.NoErr(err) // the variable alone is a valid setting
			c.check(is, f)
			is.Equal(string(f.from[strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(c.env, "WHARF_"), "_", "-"))]),
				"env "+c.env) // and its origin is the variable
		})
	}
	t.Run("every flag is in this table", func(t *testing.T) {
		is := is.New(t)
		f, err := parseServe(nil, envOf(map[string]string{"HOME": t.TempDir()}), io.Discard)
		is.NoErr(err) // the defaults parse
		f.fs.VisitAll(func(fl *flag.Flag) {
			if v := envName(fl.Name); !seen[v] {
				t.Errorf("flag --%s: no row for %s", fl.Name, v)
			}
		})
	})
}

// TestAFlagWinsOverItsVariable gives both and finds the flag's value, even
// for a list flag that would otherwise accumulate both.
func TestAFlagWinsOverItsVariable(t *testing.T) {
	is := is.New(t)
	env := map[string]string{"HOME": t.TempDir(), "WHARF_LISTEN": "127.0.0.1:1", "WHARF_PUBLIC_HOST": "env.example",
		"WHARF_AGENT": "x=from-env"}
	f, err := parseServe([]string{"--listen", "127.0.0.1:2", "--public-host", "flag.example", "--agent", "y=from-flag"},
		envOf(env), io.Discard)
	is.NoErr(err)
	is.Equal(f.listen, "127.0.0.1:2")                                        // the flag's address
	is.Equal(f.publicHosts, []string{"flag.example"})                        // only the flag's hosts
	is.Equal(f.agents, map[string][]string{"y": {"from-flag"}})              // only the flag's agents
	is.Equal(f.from["listen"], fromFlag)                                     // reported as from the flag
	is.Equal(f.from["log-level"], fromDefault)                               // an untouched flag is its default
	is.Equal(f.from["public-host"], fromFlag)                                // the list flag too
	is.Equal(string(f.from["agent"]), "flag")                                // and the repeatable one
	is.True(f.from["session-lifetime"] != fromEnv("WHARF_SESSION_LIFETIME")) // nothing set it
}

// TestABadVariableIsAUsageErrorNamingIt checks an operator learns which
// variable to fix, not a flag they never typed.
func TestABadVariableIsAUsageErrorNamingIt(t *testing.T) {
	for _, c := range []struct{ env, value string }{
		{"WHARF_SESSION_LIFETIME", "a month"},
		{"WHARF_ALLOW_INSECURE_HTTP", "perhaps"},
		{"WHARF_TRUSTED_PROXIES", "proxy.example"},
		{"WHARF_AGENT", "no-command="},
	} {
		t.Run(c.env, func(t *testing.T) {
			is := is.New(t)
			_, err := parseServe(nil, envOf(map[string]string{"HOME": t.TempDir(), c.env: c.value}), io.Discard)
			var ue usageError
			is.True(err != nil && errors.As(err, &ue))             // a usage error (exit 2)
			is.True(strings.Contains(err.Error(), "$"+c.env))      // naming the variable
			is.True(!strings.Contains(err.Error(), "wharf serve")) // said once, by main
		})
	}
}

// TestPrintConfigShowsEveryValueAndItsOriginAndStartsNothing runs
// --print-config through run() and checks it neither opens the state
// directory nor prints an agent command's secret.
func TestPrintConfigShowsEveryValueAndItsOriginAndStartsNothing(t *testing.T) {
	is := is.New(t)
	dir := filepath.Join(t.TempDir(), "state")
	env := map[string]string{"HOME": t.TempDir(), "WHARF_STATE_DIR": dir, "WHARF_LOG_FORMAT": "json"}
	var stdout, stderr bytes.Buffer
	err := run(testContext(t), []string{"serve", "--print-config", "--listen", "127.0.0.1:4801",
		"--agent", `claude=env ANTHROPIC_API_KEY=sk-ant-secret0 claude --acp`}, envOf(env), strings.NewReader(""), &stdout, &stderr)
	is.NoErr(err) // printing succeeds
	out := stdout.String()
	line := func(flag string) []string {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == flag {
				return f
			}
		}
		return nil
	}
	is.Equal(line("--listen"), []string{"--listen", "WHARF_LISTEN", "127.0.0.1:4801", "flag"})               // a flag
	is.Equal(line("--state-dir"), []string{"--state-dir", "WHARF_STATE_DIR", dir, "env", "WHARF_STATE_DIR"}) // a variable
	is.Equal(line("--log-level"), []string{"--log-level", "WHARF_LOG_LEVEL", "info", "default"})             // a default
	is.Equal(line("--log-format")[2], "json")                                                                // from its variable
	is.True(strings.Contains(out, "ANTHROPIC_API_KEY=<redacted>"))                                           // the assignment is shown
	is.True(!strings.Contains(out, "sk-ant-secret0"))                                                        // but never its value
	is.True(line("--print-config") == nil)                                                                   // the switch itself is not a setting
	_, err = os.Stat(dir)
	is.True(os.IsNotExist(err)) // nothing was created
}

// TestUserReadsWHARFSTATEDIR checks `wharf user`
// reads WHARF_STATE_DIR like serve, so a service's environment serves both.
func TestUserReadsWHARFSTATEDIR(t *testing.T) {
	is := is.New(t)
	dir := stateDir(t)
	env := map[string]string{"HOME": t.TempDir(), "WHARF_STATE_DIR": dir}
	var out bytes.Buffer
	err := run(testContext(t), []string{"user", "add", "bob", "--password-stdin"}, envOf(env),
		strings.NewReader("correct horse battery staple\n"), &out, io.Discard)
	is.NoErr(err) // the user is added
	_, err = os.Stat(filepath.Join(dir, "wharf.db"))
	is.NoErr(err) // in the variable's state directory
}

// TestLogFormatJSONWritesOneObjectPerLine checks the JSON handler is
// chosen and a bad format is a usage error.
func TestLogFormatJSONWritesOneObjectPerLine(t *testing.T) {
	is := is.New(t)
	var buf bytes.Buffer
	log, err := newLogger("info", "json", &buf)
	is.NoErr(err)
	log.Info("serving", "url", "http://127.0.0.1:4700/")
	var rec map[string]any
	is.NoErr(json.Unmarshal(buf.Bytes(), &rec)) // the line is one JSON object
	is.Equal(rec["msg"], "serving")             // with the message
	is.Equal(rec["level"], "INFO")              // and the level
	_, err = newLogger("info", "xml", &buf)
	var ue usageError
	is.True(errors.As(err, &ue)) // another format is a usage error
}
