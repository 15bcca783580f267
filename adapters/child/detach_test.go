package child_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
)

// hold GETs the child's HoldPath and returns the response, whose body
// stays open while the child holds.
func (c *inProcess) hold(t *testing.T) *http.Response {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return new(net.Dialer).DialContext(ctx, "unix", c.socket)
	}}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://session"+childproto.HoldPath, nil)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestAChildWithAGraceOutlivesItsStdinAndStopsWhenAskedTo(t *testing.T) {
	is := is.New(t)
	c := startChild(t, "alpha", "--detach-grace", "1h")
	_, err := io.WriteString(c.stdin, "something else\n")
	is.NoErr(err) // a line that is not the stop is ignored
	var facts childproto.Facts
	is.Equal(c.get(t, childproto.FactsPath, &facts), 200) // still serving
	_, err = io.WriteString(c.stdin, childproto.StopLine)
	is.NoErr(err)                                                           // the Hub's polite stop
	is.NoErr(c.wait(t))                                                     // ends the child cleanly
	is.True(strings.Contains(c.stderr.String(), "stopping: the Hub asked")) // saying why
}

func TestAChildNoHubHoldsStopsAfterItsGrace(t *testing.T) {
	is := is.New(t)
	c := startChild(t, "alpha", "--detach-grace", "200ms")
	resp := c.hold(t)
	is.Equal(resp.StatusCode, 200) // an adopting Hub holds it
	c.stdin.Close()                // the Hub that started it is gone
	var facts childproto.Facts
	is.Equal(c.get(t, childproto.FactsPath, &facts), 200)                         // and it still serves, held
	resp.Body.Close()                                                             // then the last Hub goes too
	is.NoErr(c.wait(t))                                                           // and the child stops by itself
	is.True(strings.Contains(c.stderr.String(), "no Hub came back within 200ms")) // saying why
}

func TestAHoldEndsCleanlyWhenTheChildStops(t *testing.T) {
	is := is.New(t)
	c := startChild(t, "alpha", "--detach-grace", "1h")
	resp := c.hold(t)
	is.Equal(resp.StatusCode, 200) // held
	read := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		read <- err
	}()
	c.cancel() // SIGTERM, an adopting Hub's stop
	is.NoErr(c.wait(t))
	select {
	case err := <-read:
		is.NoErr(err) // the hold's body ends at its proper end: the child's end, not a lost connection
	case <-time.After(10 * time.Second):
		t.Fatal("the hold did not end within 10s of the child's")
	}
}

func TestAChildWithoutAGraceHasNothingToHoldAndStopsAtTheEndOfStdin(t *testing.T) {
	is := is.New(t)
	c := startChild(t, "alpha")
	resp := c.hold(t)
	is.Equal(resp.StatusCode, 404) // no hold in the first protocol
	_, err := io.WriteString(c.stdin, childproto.StopLine)
	is.NoErr(err)
	var facts childproto.Facts
	is.Equal(c.get(t, childproto.FactsPath, &facts), 200) // nor a stop line: it still serves
	c.stdin.Close()
	is.NoErr(c.wait(t))
	is.True(strings.Contains(c.stderr.String(), "stdin closed, the Hub is gone")) // the end of stdin stops it
}
