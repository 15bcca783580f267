package daemon_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
	"github.com/wharfhub/wharf/adapters/internal/githttptest"
)

// TestAnHTTPSCloneFromAPrivateCAIsAnsweredThroughItsTerminal: `wharf
// serve --clone-ca-file` lets a clone trust a Git host's private CA, and
// the host's prompts for a user name and password reach the job's
// events and are answered through its input; the password never comes
// back in the output.
func TestAnHTTPSCloneFromAPrivateCAIsAnsweredThroughItsTerminal(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	const password = "private-ca-pass-41"
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	tmp, err := os.MkdirTemp("", "wclone")
	is.NoErr(err)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	repos := filepath.Join(tmp, "repos")
	is.NoErr(os.MkdirAll(repos, 0o755))
	out, err := exec.Command("git", "init", "-q", "--bare", filepath.Join(repos, "app.git")).CombinedOutput()
	is.NoErr(err) // a repository to clone
	if err != nil {
		t.Log(string(out))
	}
	host := githttptest.New(t, repos, "ann", password, true)
	dest := filepath.Join(tmp, "src")
	is.NoErr(os.MkdirAll(dest, 0o755))
	d, err := daemontest.Start(ctx, daemontest.Options{Binary: daemontest.Build(t), StateDir: filepath.Join(tmp, "state"),
		Args: []string{"--clone-ca-file", host.CAFile(t)}})
	is.NoErr(err)
	t.Cleanup(func() { d.Kill(); d.AwaitChildren() })
	pw, err := d.FirstUserPassword()
	is.NoErr(err)
	c, _, err := daemontest.Login(ctx, daemontest.NewHTTPClient(nil), d.URL(), daemontest.FirstUser, pw)
	is.NoErr(err)

	var created struct{ JobID string }
	status, raw, err := c.Do(ctx, "POST", "api/hub/clone-jobs", map[string]any{"url": host.URL + "/app.git", "dest": dest}, &created)
	is.NoErr(err)
	is.Equal(status, http.StatusAccepted) // accepted
	if status != http.StatusAccepted {
		t.Fatalf("%s", raw)
	}
	resp, err := c.Request(ctx, "GET", "api/hub/clone-jobs/"+created.JobID+"/events", nil)
	is.NoErr(err)
	defer resp.Body.Close()
	stream := daemontest.ReadSSE(resp.Body)
	var output strings.Builder
	until := func(s string) {
		t.Helper()
		_, err := stream.Until(ctx, func(e daemontest.Event) bool {
			output.WriteString(e.Data)
			return strings.Contains(output.String(), s) || e.Name == "result"
		})
		if err != nil || !strings.Contains(output.String(), s) {
			t.Fatalf("no %q in the clone's events (%v):\n%s", s, err, output.String())
		}
	}
	answer := func(s string) {
		t.Helper()
		status, raw, err := c.Do(ctx, "POST", "api/hub/clone-jobs/"+created.JobID+"/input", map[string]string{"input": s}, nil)
		if err != nil || status != http.StatusOK {
			t.Fatalf("input: %d %s %v", status, raw, err)
		}
	}
	until("Username for 'https://" + host.Host() + "'") // the certificate was trusted, and the host asks
	answer("ann")
	until("Password for 'https://ann@" + host.Host() + "'")
	answer(password)
	until(`"status":"succeeded"`)                         // cloned and registered
	is.True(!strings.Contains(output.String(), password)) // the password never came back
	_, err = os.Stat(filepath.Join(dest, "app", ".git"))
	is.NoErr(err) // the clone is there
}
