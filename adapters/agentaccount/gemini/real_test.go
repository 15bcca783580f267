package gemini_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/gemini"
	"github.com/wharfhub/wharf/adapters/agentaccount/internal/ptyflow/ptyflowtest"
	"github.com/wharfhub/wharf/hub"
)

// realGemini is the real `gemini` WHARF_TEST_GEMINI names (.ci/run
// installs @google/gemini-cli 0.61.0), or the test is skipped.
func realGemini(t *testing.T) string {
	p := os.Getenv("WHARF_TEST_GEMINI")
	if p == "" {
		t.Skip("WHARF_TEST_GEMINI is not set: no real Gemini CLI to test against (.ci/run installs it)")
	}
	return p
}

// realSetup is a driver over the real CLI with an empty HOME of its own
// and the test's PATH (node).
func realSetup(t *testing.T) (hub.AgentLoginDriver, string) {
	bin := realGemini(t)
	home := t.TempDir()
	d := gemini.New(gemini.Options{Command: []string{bin}, Env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}})
	t.Cleanup(func() {
		if pids := ptyflowtest.Left("HOME=" + home); len(pids) > 0 {
			t.Errorf("processes left running: %v", pids)
		}
	})
	return d, home
}

func TestTheRealGeminiCLIReportsItsLoggedOutState(t *testing.T) {
	is := is.New(t)
	d, home := realSetup(t)
	rt, err := d.Start(t.Context())
	is.NoErr(err) // it starts
	st, err := rt.Status(t.Context())
	is.NoErr(err)                            // its status is read
	is.Equal(st.Version, "0.61.0")           // with its package's version
	is.Equal(st.Targets[0].Connected, false) // logged out
	is.True(st.Capabilities.Login)           // able to log in
	is.Equal(st.Capabilities.Logout, false)  // with nothing to log out
	rt.Close()
	_, err = os.Stat(filepath.Join(home, ".gemini"))
	is.True(errors.Is(err, os.ErrNotExist)) // and its store was only read: Gemini CLI never ran
}

// Starting a login reaches no server: the real CLI prints its link
// offline, which the driver reads from its terminal.
func TestTheRealGeminiCLIsLoginLinkIsReadAndCancelled(t *testing.T) {
	is := is.New(t)
	d, _ := realSetup(t)
	rt, err := d.Start(t.Context())
	is.NoErr(err) // it starts
	defer rt.Close()
	f, err := rt.Login(t.Context(), hub.AgentLoginStart{Agent: "gemini", Target: "google", Method: "oauth-personal"})
	is.NoErr(err) // the login starts
	u := f.Challenge().URL
	is.True(strings.HasPrefix(u, "https://accounts.google.com/"))    // with Google's link
	is.True(strings.Contains(u, "codeassist.google.com%2Fauthcode")) // for the page that shows a code
	f.Cancel()
	within(t, f.Done(), 10*time.Second, "the login settles")
	is.True(f.Err() != nil) // cancelled
}

// A code typed into the real CLI's terminal reaches it: it tries the
// code (refused by Google, or unreachable offline), says it failed and
// prints a new link, which ends this login.
func TestTheRealGeminiCLIReadsTheCodeTypedIntoItsTerminal(t *testing.T) {
	is := is.New(t)
	d, home := realSetup(t)
	rt, err := d.Start(t.Context())
	is.NoErr(err) // it starts
	defer rt.Close()
	f, err := rt.Login(t.Context(), hub.AgentLoginStart{Agent: "gemini", Target: "google", Method: "oauth-personal"})
	is.NoErr(err)                                              // the login starts
	is.NoErr(f.SubmitCode(t.Context(), "4/0Anot-a-real-code")) // a code is typed
	within(t, f.Done(), 60*time.Second, "the login settles")
	is.Equal(hub.KindOf(f.Err()), hub.Invalid) // refused: the code was read and tried
	_, err = os.Stat(filepath.Join(home, ".gemini", "oauth_creds.json"))
	is.True(errors.Is(err, os.ErrNotExist)) // and no login saved
}
