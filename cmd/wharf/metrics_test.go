package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// metricsURL is the URL serve logs for its metrics listener.
var metricsURL = regexp.MustCompile(`"serving metrics" url=(\S+)`)

func TestServeMetricsOverTLSWithTheHubsCertificate(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	certFile, keyFile, roots := selfSigned(t)
	d := startServe(testContext(t), t, map[string]string{"USER": "ann"}, stateDir(t),
		"--tls-cert", certFile, "--tls-key", keyFile, "--metrics-listen", "127.0.0.1:0")
	m := metricsURL.FindStringSubmatch(d.stderr.String())
	is.True(m != nil)                                      // the metrics URL is logged
	is.True(strings.HasPrefix(m[1], "https://127.0.0.1:")) // served over TLS, as the Hub is
	c := newClient(t, roots)
	resp, err := c.Get(m[1])
	is.NoErr(err) // the certificate is the Hub's: the client trusts it
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	is.NoErr(err)
	is.Equal(resp.StatusCode, http.StatusOK)                                   // scraped
	is.True(strings.Contains(string(body), "# TYPE wharf_live_streams gauge")) // Wharf's own metrics
	resp, err = c.Get(strings.TrimSuffix(m[1], "/metrics") + "/readyz")
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusOK) // ready: recovered, nothing pending
	is.NoErr(d.stop())                       // both listeners stop
}

func TestParseServeAllowsMetricsOffLoopbackOnlyWithTLS(t *testing.T) {
	is := is.New(t)
	f, err := parseServe([]string{"--state-dir", "/tmp/x", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--metrics-listen", "0.0.0.0:9464"},
		envOf(nil), io.Discard)
	is.NoErr(err)                             // with TLS, metrics may be reached off loopback
	is.Equal(f.metricsListen, "0.0.0.0:9464") // as asked
	f, err = parseServe([]string{"--state-dir", "/tmp/x"}, envOf(nil), io.Discard)
	is.NoErr(err)                 // without the flag
	is.Equal(f.metricsListen, "") // metrics are off
}
