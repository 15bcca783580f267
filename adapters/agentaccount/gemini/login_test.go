package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// login starts a Google login, failing the test if it does not.
func login(t *testing.T, rt hub.AgentLoginRuntime) hub.AgentLoginFlow {
	t.Helper()
	f, err := rt.Login(t.Context(), hub.AgentLoginStart{Agent: "gemini", Target: "google", Method: "oauth-personal"})
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	t.Cleanup(f.Cancel)
	return f
}

func TestAGoogleLoginWithTheCodeItsPageShowsLandsInGeminiCLIsStore(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil, "CI=true") // a CI variable would make it headless: the driver drops it
	rt := s.start(t)
	started := time.Now()
	f := login(t, rt)
	ch := f.Challenge()
	is.True(strings.HasPrefix(ch.URL, "https://accounts.google.com/o/oauth2/v2/auth?"))              // Google's link
	is.True(strings.Contains(ch.URL, "redirect_uri=https%3A%2F%2Fcodeassist.google.com%2Fauthcode")) // whose page shows a code
	is.Equal(ch.Completion, hub.CompletionCode)                                                      // pasted back
	is.True(ch.ExpiresAt.After(started.Add(4 * time.Minute)))                                        // Gemini CLI waits five minutes
	is.NoErr(f.SubmitCode(t.Context(), " fake-authorization-code "))                                 // the code is typed
	within(t, f.Done(), 30*time.Second, "the login settles")
	is.NoErr(f.Err())          // completed
	is.Equal(len(s.left()), 0) // with `gemini` stopped
	fi, err := os.Stat(s.store("oauth_creds.json"))
	is.NoErr(err)                                  // the login is in Gemini CLI's store
	is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // private
	_, err = os.Stat(s.store("fake-prompts"))
	is.True(errors.Is(err, os.ErrNotExist)) // and nothing was ever sent as a prompt
	_, err = os.Stat(s.store("settings.json"))
	is.True(errors.Is(err, os.ErrNotExist)) // the user's settings were not written
	ws, err := os.ReadFile(filepath.Join(s.home, ".cache", "wharf", "gemini-login", ".gemini", "settings.json"))
	is.NoErr(err)                                           // the login ran in Wharf's workspace
	is.True(strings.Contains(string(ws), "oauth-personal")) // selecting the Google login
	st, err := rt.Status(t.Context())
	is.NoErr(err)                                                                   // the status
	is.Equal(st.Targets[0].Credentials[0].Label, "Google account fake@example.com") // reads the login and its account
	is.True(st.Capabilities.Logout)                                                 // which can be logged out
	is.True(!strings.Contains(s.log.String(), "fake-authorization-code"))           // the code was never logged
	is.True(!strings.Contains(s.log.String(), "accounts.google.com"))               // nor the link
}

func TestALoginPastAnotherSelectedTypeLeavesTheUsersSettingsAlone(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil)
	const settings = "{\n  // mine\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}\n}\n"
	s.write(t, "settings.json", settings)
	rt := s.start(t)
	f := login(t, rt) // the workspace's settings select the Google login for this run
	is.NoErr(f.SubmitCode(t.Context(), "fake-authorization-code"))
	within(t, f.Done(), 30*time.Second, "the login settles")
	is.NoErr(f.Err()) // completed
	b, err := os.ReadFile(s.store("settings.json"))
	is.NoErr(err)                 // the user's settings
	is.Equal(string(b), settings) // are as they were
}

func TestACodeGoogleRefusesFailsTheLoginWithoutRepeatingIt(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil)
	rt := s.start(t)
	f := login(t, rt)
	is.NoErr(f.SubmitCode(t.Context(), "4/0Awrong-code-5521")) // typed
	within(t, f.Done(), 30*time.Second, "the login settles")
	is.Equal(hub.KindOf(f.Err()), hub.Invalid)                     // refused
	is.True(!strings.Contains(f.Err().Error(), "wrong-code-5521")) // without the code (which Gemini CLI echoed)
	is.True(!strings.Contains(s.log.String(), "wrong-code-5521"))  // which was never logged
	is.Equal(len(s.left()), 0)                                     // `gemini` is stopped
	_, err := os.Stat(s.store("oauth_creds.json"))
	is.True(errors.Is(err, os.ErrNotExist))                               // with no login saved
	is.Equal(hub.KindOf(f.SubmitCode(t.Context(), "again")), hub.Invalid) // and an ended login takes no code
}

func TestCodesThatAreNotOneLineAreRefusedWithoutTypingThem(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil)
	rt := s.start(t)
	f := login(t, rt)
	for _, code := range []string{"", "   ", "two\nlines", "a space", "a\x03", strings.Repeat("x", 3000)} {
		err := f.SubmitCode(t.Context(), code)
		is.Equal(hub.KindOf(err), hub.Invalid) // refused
		is.Equal(fieldOf(err), "code")         // naming the code
	}
	select {
	case <-f.Done():
		t.Fatal("a refused code ended the login")
	default: // still waiting
	}
	is.NoErr(f.SubmitCode(t.Context(), "fake-authorization-code")) // the right one
	within(t, f.Done(), 30*time.Second, "the login settles")
	is.NoErr(f.Err()) // completes it
}

func TestALoginIsRefusedWhileGeminiCLIIsLoggedIn(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil)
	s.write(t, "oauth_creds.json", `{"refresh_token":"r"}`)
	rt := s.start(t)
	_, err := rt.Login(t.Context(), hub.AgentLoginStart{Agent: "gemini", Target: "google", Method: "oauth-personal"})
	is.Equal(hub.KindOf(err), hub.Invalid)                   // refused: Gemini CLI would use that one
	is.True(strings.Contains(hub.MessageOf(err), "log out")) // saying what to do
	is.Equal(len(s.left()), 0)                               // nothing was started
}

func TestALoginIsRefusedWhenGeminiCLIKeepsItEncrypted(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil, "GEMINI_FORCE_ENCRYPTED_FILE_STORAGE=true")
	rt := s.start(t)
	_, err := rt.Login(t.Context(), hub.AgentLoginStart{Agent: "gemini", Target: "google", Method: "oauth-personal"})
	is.Equal(hub.KindOf(err), hub.Invalid) // refused: its result could not be seen
	is.Equal(fieldOf(err), "method")       // naming the method
}

func TestLoginRefusesWhatGeminiCLIDoesNotOffer(t *testing.T) {
	for _, c := range []struct {
		name  string
		req   hub.AgentLoginStart
		field string
	}{
		{"another target", hub.AgentLoginStart{Target: "anthropic", Method: "oauth-personal"}, "target"},
		{"an environment method", hub.AgentLoginStart{Target: "google", Method: "env-gemini-api-key"}, "method"},
		{"answers", hub.AgentLoginStart{Target: "google", Method: "oauth-personal", Answers: map[string]string{"a": "b"}}, "answers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			s := newSetup(t, nil)
			rt := s.start(t)
			_, err := rt.Login(t.Context(), c.req)
			is.Equal(hub.KindOf(err), hub.Invalid) // refused
			is.Equal(fieldOf(err), c.field)        // naming the input
		})
	}
}

func TestCancelEndsTheLoginAndStopsGemini(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil)
	rt := s.start(t)
	f := login(t, rt)
	is.True(len(s.left()) > 0) // `gemini` runs
	f.Cancel()
	within(t, f.Done(), 10*time.Second, "the login settles")
	is.True(strings.Contains(hub.MessageOf(f.Err()), "cancelled")) // as cancelled
	rt.Close()
	is.Equal(len(s.left()), 0) // and `gemini` is gone
}

func TestCloseEndsTheLoginAndLeavesNothingRunning(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil)
	rt := s.start(t)
	f := login(t, rt)
	rt.Close()
	within(t, rt.Done(), time.Second, "the runtime is done")
	within(t, f.Done(), time.Second, "the login settled")
	is.Equal(hub.KindOf(f.Err()), hub.Unavailable) // stopped
	is.Equal(len(s.left()), 0)                     // nothing is left
}

func TestALoginWhoseGeminiDiesFailsAsUnavailable(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil)
	rt := s.start(t)
	f := login(t, rt)
	pids := s.left()
	is.Equal(len(pids), 1) // `gemini`
	p, err := os.FindProcess(pids[0])
	is.NoErr(err)      // found
	is.NoErr(p.Kill()) // and killed from outside
	within(t, f.Done(), 10*time.Second, "the login settles")
	is.Equal(hub.KindOf(f.Err()), hub.Unavailable) // unavailable
}

func TestALoginThatPrintsNoLinkIsBoundedByItsContext(t *testing.T) {
	is := is.New(t)
	script := filepath.Join(t.TempDir(), "gemini")
	is.NoErr(os.WriteFile(script, []byte("#!/bin/sh\ncase \"$1\" in --version) echo 0.61.0 ;; *) exec sleep 300 ;; esac\n"), 0o755))
	s := newSetup(t, []string{script})
	rt := s.start(t)
	_, err := rt.Login(waitCtx(t, 500*time.Millisecond), hub.AgentLoginStart{Agent: "gemini", Target: "google", Method: "oauth-personal"})
	is.True(errors.Is(err, context.DeadlineExceeded)) // it fails when its context ends
	is.Equal(len(s.left()), 0)                        // and `gemini` is gone
}

func TestSubmitRedirectIsRefused(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil)
	rt := s.start(t)
	f := login(t, rt)
	err := f.SubmitRedirect(t.Context(), "http://localhost:1/oauth2callback?code=x")
	is.Equal(hub.KindOf(err), hub.Invalid) // a code login takes no address
	is.Equal(fieldOf(err), "address")      // naming the address
}

func TestALoginThenLogoutLeavesTheAccountAmongTheOldOnes(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil)
	rt := s.start(t)
	f := login(t, rt)
	is.NoErr(f.SubmitCode(t.Context(), "fake-authorization-code"))
	within(t, f.Done(), 30*time.Second, "the login settles")
	is.NoErr(f.Err())                                                                                                         // logged in
	is.NoErr(rt.Logout(t.Context(), hub.AgentCredentialRef{Agent: "gemini", Target: "google", Credential: "oauth-personal"})) // and out
	b, err := os.ReadFile(s.store("google_accounts.json"))
	is.NoErr(err) // the accounts file
	var acct map[string]any
	is.NoErr(json.Unmarshal(b, &acct))               // as Gemini CLI keeps it
	is.Equal(acct["active"], nil)                    // no active account
	is.Equal(acct["old"], []any{"fake@example.com"}) // the one logged out among the old
	f = login(t, rt)                                 // and a new login can start
	f.Cancel()
	within(t, f.Done(), 10*time.Second, "the login settles")
}
