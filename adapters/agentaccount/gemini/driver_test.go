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

	"github.com/wharfhub/wharf/adapters/agentaccount/gemini"
	"github.com/wharfhub/wharf/hub"
)

func TestTheDriverNamesGeminiCLI(t *testing.T) {
	is := is.New(t)
	a := gemini.New(gemini.Options{}).Agent()
	is.Equal(a, hub.AgentLoginAgent{ID: "gemini", Name: "Gemini CLI", Command: "gemini", LoginCommand: "gemini"}) // its identity
}

func TestAGeminiCLINotOnThePathIsNotInstalled(t *testing.T) {
	is := is.New(t)
	d := gemini.New(gemini.Options{Env: []string{"HOME=" + t.TempDir(), "PATH=" + t.TempDir()}})
	_, err := d.Start(t.Context())
	is.True(errors.Is(err, hub.ErrAgentNotInstalled))                       // not installed
	is.True(strings.Contains(hub.MessageOf(err), "`gemini` was not found")) // naming the command
}

func TestAnEnvironmentWithoutHomeLocatesNoStore(t *testing.T) {
	is := is.New(t)
	d := gemini.New(gemini.Options{Env: []string{"PATH=" + fakeDir}})
	_, err := d.Start(t.Context())
	is.Equal(hub.KindOf(err), hub.Unavailable) // no store, so no status
}

func TestTheVersionIsReadFromThePackageGeminiCLIIsInstalledFrom(t *testing.T) {
	is := is.New(t)
	// npm's layout: node_modules/.bin/gemini → ../@google/gemini-cli/bundle/gemini.js
	nm := filepath.Join(t.TempDir(), "node_modules")
	pkg := filepath.Join(nm, "@google", "gemini-cli")
	is.NoErr(os.MkdirAll(filepath.Join(pkg, "bundle"), 0o755))
	is.NoErr(os.MkdirAll(filepath.Join(nm, ".bin"), 0o755))
	is.NoErr(os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@google/gemini-cli","version":"0.99.1"}`), 0o644))
	// A program that would answer another version, and records being run.
	marker := filepath.Join(t.TempDir(), "ran")
	is.NoErr(os.WriteFile(filepath.Join(pkg, "bundle", "gemini.js"), []byte("#!/bin/sh\ntouch "+marker+"\necho 0.1.0\n"), 0o755))
	is.NoErr(os.Symlink("../@google/gemini-cli/bundle/gemini.js", filepath.Join(nm, ".bin", "gemini")))
	s := newSetup(t, []string{filepath.Join(nm, ".bin", "gemini")})
	rt := s.start(t)
	st, err := rt.Status(t.Context())
	is.NoErr(err)                  // read
	is.Equal(st.Version, "0.99.1") // the package's version
	_, err = os.Stat(marker)
	is.True(errors.Is(err, os.ErrNotExist)) // without running it
}

func TestStartAsksTheVersionOfAGeminiCLIOutsideItsPackage(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil)
	rt := s.start(t)
	st, err := rt.Status(t.Context())
	is.NoErr(err)                            // read
	is.Equal(st.Version, "0.61.0")           // as `gemini --version` answers
	is.Equal(st.Targets[0].Connected, false) // logged out
	is.True(st.Capabilities.Login)           // able to log in
}

func TestTheStatusReadsTheStoreAndTheEnvironment(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil, "GEMINI_API_KEY=AIza-secret-value")
	s.write(t, "oauth_creds.json", `{"access_token":"ya29.secret","refresh_token":"1//secret"}`)
	s.write(t, "google_accounts.json", `{"active":"a@b.c","old":[]}`)
	s.write(t, "settings.json", "{\n  // chosen in /auth\n  \"security\": {\"auth\": {\"selectedType\": \"oauth-personal\"}}\n}")
	rt := s.start(t)
	st, err := rt.Status(t.Context())
	is.NoErr(err) // read
	creds := st.Targets[0].Credentials
	is.Equal(len(creds), 2)                          // the Google login and the environment's key
	is.Equal(creds[0].Label, "Google account a@b.c") // with its account
	is.True(creds[0].Active)                         // selected
	is.Equal(creds[1].ID, "env:GEMINI_API_KEY")      // beside the key
	is.True(!creds[1].Active)                        // not used
	out, _ := json.Marshal(st)
	is.True(!strings.Contains(string(out), "secret"))    // no secret in the status
	is.True(!strings.Contains(s.log.String(), "secret")) // nor in the log
}

func TestAStoreFileThatCannotBeReadCountsAsMissing(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, s *setup)
	}{
		{"too large", func(t *testing.T, s *setup) {
			s.write(t, "oauth_creds.json", `{"refresh_token":"r","pad":"`+strings.Repeat("x", gemini.MaxFile)+`"}`)
		}},
		{"a link out of the store", func(t *testing.T, s *setup) {
			outside := filepath.Join(t.TempDir(), "creds.json")
			if err := os.WriteFile(outside, []byte(`{"refresh_token":"r"}`), 0o600); err != nil {
				t.Fatal(err)
			}
			s.write(t, "settings.json", "{}")
			if err := os.Symlink(outside, s.store("oauth_creds.json")); err != nil {
				t.Fatal(err)
			}
		}},
		{"a folder", func(t *testing.T, s *setup) {
			if err := os.MkdirAll(s.store("oauth_creds.json"), 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			s := newSetup(t, nil)
			c.setup(t, s)
			rt := s.start(t)
			st, err := rt.Status(t.Context())
			is.NoErr(err)                            // the status is read
			is.Equal(st.Targets[0].Connected, false) // without that login
		})
	}
}

func TestAKeyIsRefusedPointingAtTheEnvironment(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil)
	rt := s.start(t)
	err := rt.LoginWithKey(t.Context(), hub.AgentKeyLogin{Agent: "gemini", Target: "google", Method: "env-gemini-api-key", Key: "AIza-typed-key"})
	is.Equal(hub.KindOf(err), hub.Invalid)                          // refused
	is.Equal(fieldOf(err), "key")                                   // naming the key
	is.True(strings.Contains(hub.MessageOf(err), "GEMINI_API_KEY")) // saying where a key goes
	is.True(!strings.Contains(err.Error(), "AIza-typed-key"))       // never repeating it
	is.True(!strings.Contains(s.log.String(), "AIza-typed-key"))    // nor logging it
}

func TestActivateIsRefused(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil)
	rt := s.start(t)
	err := rt.Activate(t.Context(), hub.AgentCredentialRef{Agent: "gemini", Target: "google", Credential: "oauth-personal"})
	is.Equal(hub.KindOf(err), hub.Invalid) // Wharf does not choose Gemini CLI's login
}

func TestLogoutRefusesWhatIsNotGeminiCLIsStoredLogin(t *testing.T) {
	for _, c := range []struct {
		name, target, cred string
		field              string
	}{
		{"the environment's key", "google", "env:GEMINI_API_KEY", "credential"},
		{"a saved key", "google", "saved-api-key", "credential"},
		{"Vertex AI", "google", "env:vertex-ai", "credential"},
		{"an unknown login", "google", "nope", "credential"},
		{"a Google login not saved", "google", "oauth-personal", "credential"},
		{"another target", "anthropic", "oauth-personal", "target"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			s := newSetup(t, nil, "GEMINI_API_KEY=k")
			rt := s.start(t)
			err := rt.Logout(t.Context(), hub.AgentCredentialRef{Agent: "gemini", Target: c.target, Credential: c.cred})
			is.Equal(hub.KindOf(err), hub.Invalid) // refused
			is.Equal(fieldOf(err), c.field)        // naming the input
		})
	}
}

func TestLogoutRemovesOnlyTheGoogleLogin(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, nil)
	s.write(t, "oauth_creds.json", `{"refresh_token":"r"}`)
	s.write(t, "google_accounts.json", `{"active":"a@b.c","old":["x@y.z"]}`)
	s.write(t, "settings.json", `{"security":{"auth":{"selectedType":"oauth-personal"}}}`)
	s.write(t, "projects.json", `{"projects":{}}`)
	is.NoErr(os.Chmod(s.store("google_accounts.json"), 0o640))
	rt := s.start(t)
	is.NoErr(rt.Logout(t.Context(), hub.AgentCredentialRef{Agent: "gemini", Target: "google", Credential: "oauth-personal"})) // logged out
	_, err := os.Stat(s.store("oauth_creds.json"))
	is.True(errors.Is(err, os.ErrNotExist)) // the login is gone
	b, err := os.ReadFile(s.store("google_accounts.json"))
	is.NoErr(err) // the accounts file stays
	var acct struct {
		Active *string  `json:"active"`
		Old    []string `json:"old"`
	}
	is.NoErr(json.Unmarshal(b, &acct))             // as Gemini CLI's
	is.Equal(acct.Active, (*string)(nil))          // with no active account
	is.Equal(acct.Old, []string{"x@y.z", "a@b.c"}) // the account among the old ones
	fi, err := os.Stat(s.store("google_accounts.json"))
	is.NoErr(err)                                  // and
	is.Equal(fi.Mode().Perm(), os.FileMode(0o640)) // its mode kept
	for _, name := range []string{"settings.json", "projects.json"} {
		_, err := os.Stat(s.store(name))
		is.NoErr(err) // the rest of the store is untouched
	}
	entries, err := os.ReadDir(filepath.Join(s.home, ".gemini"))
	is.NoErr(err)             // and nothing was left behind
	is.Equal(len(entries), 3) // settings, projects, accounts
	st, err := rt.Status(t.Context())
	is.NoErr(err)                            // the status
	is.Equal(st.Targets[0].Connected, false) // says so
}

// fieldOf is the field an error names.
func fieldOf(err error) string {
	var he *hub.Error
	if errors.As(err, &he) && he.Details != nil {
		return he.Details.Field
	}
	return ""
}

// waitCtx is a context ending after d.
func waitCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}
