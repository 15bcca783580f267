package claude_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/claude"
	"github.com/wharfhub/wharf/hub"
)

func TestTheDriverNamesClaudeCode(t *testing.T) {
	is := is.New(t)
	a := claude.New(claude.Options{}).Agent()
	is.Equal(a, hub.AgentLoginAgent{ID: "claude", Name: "Claude Code", Command: "claude", LoginCommand: "claude auth login"}) // its identity
}

func TestAClaudeCodeNotOnThePathIsNotInstalled(t *testing.T) {
	is := is.New(t)
	d := claude.New(claude.Options{Env: []string{"HOME=" + t.TempDir(), "PATH=" + t.TempDir()}})
	_, err := d.Start(t.Context())
	is.True(errors.Is(err, hub.ErrAgentNotInstalled))                       // not installed
	is.True(strings.Contains(hub.MessageOf(err), "`claude` was not found")) // naming the command
}

func TestStartReadsTheVersionAndStatusTheLogin(t *testing.T) {
	is := is.New(t)
	s := newSetup(t)
	rt := s.start(t)
	st, err := rt.Status(t.Context())
	is.NoErr(err)                            // the status is read
	is.Equal(st.Version, "2.1.197")          // with the version
	is.Equal(st.Account.Source, "none")      // logged out
	is.Equal(st.Targets[0].Connected, false) // so not connected
	is.True(st.Capabilities.Login)           // and able to log in
}

func TestTheStatusReadsTheEnvironmentsLogins(t *testing.T) {
	for _, c := range []struct {
		name, env, source, cred string
	}{
		{"an API key", "ANTHROPIC_API_KEY=sk-ant-api03-secret", "env-api-key", "env:ANTHROPIC_API_KEY"},
		{"a token", "CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-secret", "env-token", "env-token"},
		{"a third-party cloud", "CLAUDE_CODE_USE_VERTEX=1", "third-party", "third-party"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			s := newSetup(t, c.env)
			rt := s.start(t)
			st, err := rt.Status(t.Context())
			is.NoErr(err)                                           // read
			is.Equal(st.Account.Source, c.source)                   // the source
			is.Equal(st.Targets[0].Credentials[0].ID, c.cred)       // the login
			is.Equal(st.Targets[0].Credentials[0].Removable, false) // which logout cannot remove
			is.Equal(st.Capabilities.Logout, false)                 // nor offers to
			err = rt.Logout(t.Context(), hub.AgentCredentialRef{Agent: "claude", Target: "anthropic", Credential: c.cred})
			is.Equal(hub.KindOf(err), hub.Invalid)               // so a logout is refused
			is.Equal(fieldOf(err), "credential")                 // naming the credential
			is.True(!strings.Contains(s.log.String(), "secret")) // and no secret was logged
		})
	}
}

// login starts a login of method, failing the test if it does not.
func login(t *testing.T, rt hub.AgentLoginRuntime, method string) hub.AgentLoginFlow {
	t.Helper()
	f, err := rt.Login(t.Context(), hub.AgentLoginStart{Agent: "claude", Target: "anthropic", Method: method})
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	t.Cleanup(f.Cancel)
	return f
}

// stateOf is the state of a challenge's link.
func stateOf(t *testing.T, f hub.AgentLoginFlow) string {
	_, q, _ := strings.Cut(f.Challenge().URL, "state=")
	q, _, _ = strings.Cut(q, "&")
	if q == "" {
		t.Fatalf("no state in the link")
	}
	return q
}

func TestASubscriptionLoginWithTheCodeItsPageShowsLandsInClaudeCodesStore(t *testing.T) {
	is := is.New(t)
	s := newSetup(t)
	rt := s.start(t)
	f := login(t, rt, "claudeai")
	ch := f.Challenge()
	is.True(strings.HasPrefix(ch.URL, "https://claude.com/cai/oauth/authorize?")) // the manual link
	is.Equal(ch.Completion, hub.CompletionCode)                                   // finished with a code
	is.True(ch.Instructions != "")                                                // saying what to do
	state := stateOf(t, f)
	is.NoErr(f.SubmitCode(t.Context(), "fake-authorization-code")) // a bare code is taken
	within(t, f.Done(), 20*time.Second, "the login settles")
	is.NoErr(f.Err()) // completed
	_, err := os.Stat(filepath.Join(s.home, ".claude", ".credentials.json"))
	is.NoErr(err) // in Claude Code's own store
	st, err := rt.Status(t.Context())
	is.NoErr(err)                                                                                                          // which the status reads
	is.Equal(st.Account.Source, "subscription")                                                                            // as a subscription
	is.Equal(st.Account.Email, "fake@example.com")                                                                         // of the account
	is.Equal(st.Account.Plan, "max")                                                                                       // on its plan
	is.True(st.Capabilities.Logout)                                                                                        // that can be logged out
	is.Equal(len(s.left()), 0)                                                                                             // and nothing runs any more
	is.True(!strings.Contains(s.log.String(), "fake-authorization-code"))                                                  // the code was never logged
	is.True(!strings.Contains(s.log.String(), state))                                                                      // nor the link's state
	is.NoErr(rt.Logout(t.Context(), hub.AgentCredentialRef{Agent: "claude", Target: "anthropic", Credential: "claudeai"})) // logged out
	_, err = os.Stat(filepath.Join(s.home, ".claude", ".credentials.json"))
	is.True(errors.Is(err, os.ErrNotExist)) // which removed the login
	st, err = rt.Status(t.Context())
	is.NoErr(err)                       // and the status says so
	is.Equal(st.Account.Source, "none") // logged out
}

func TestAConsoleLoginWithCodeAndStateLandsInClaudeCodesStore(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, "FORCE_HYPERLINK=1") // the link comes as a terminal hyperlink
	rt := s.start(t)
	f := login(t, rt, "console")
	is.True(strings.HasPrefix(f.Challenge().URL, "https://platform.claude.com/oauth/authorize?")) // the Console's link, read whole
	is.True(!strings.ContainsAny(f.Challenge().URL, "\x1b\x07 "))                                 // without the terminal's sequences
	is.NoErr(f.SubmitCode(t.Context(), "fake-authorization-code#"+stateOf(t, f)))                 // code#state is taken
	within(t, f.Done(), 20*time.Second, "the login settles")
	is.NoErr(f.Err()) // completed
	st, err := rt.Status(t.Context())
	is.NoErr(err)                                                                                                         // read
	is.Equal(st.Account.Source, "console")                                                                                // a Console login
	is.Equal(st.Targets[0].Credentials[0].ID, "console")                                                                  // listed so
	is.NoErr(rt.Logout(t.Context(), hub.AgentCredentialRef{Agent: "claude", Target: "anthropic", Credential: "console"})) // logged out
	st, err = rt.Status(t.Context())
	is.NoErr(err)                       // read again
	is.Equal(st.Account.Source, "none") // logged out
}

func TestACodeClaudeCodeRefusesFailsTheLoginWithoutRepeatingIt(t *testing.T) {
	is := is.New(t)
	s := newSetup(t)
	rt := s.start(t)
	f := login(t, rt, "claudeai")
	is.NoErr(f.SubmitCode(t.Context(), "wrong-code-7731")) // typed
	within(t, f.Done(), 20*time.Second, "the login settles")
	is.Equal(hub.KindOf(f.Err()), hub.Invalid)                            // refused
	is.True(!strings.Contains(f.Err().Error(), "wrong-code-7731"))        // without the code
	is.True(!strings.Contains(s.log.String(), "wrong-code-7731"))         // which was never logged
	is.Equal(hub.KindOf(f.SubmitCode(t.Context(), "again")), hub.Invalid) // an ended login takes no code
}

func TestACodeOfAnotherLoginIsRefusedBeforeClaudeCodeSeesIt(t *testing.T) {
	is := is.New(t)
	s := newSetup(t)
	rt := s.start(t)
	f := login(t, rt, "claudeai")
	err := f.SubmitCode(t.Context(), "fake-authorization-code#not-this-login")
	is.Equal(hub.KindOf(err), hub.Invalid) // refused
	is.Equal(fieldOf(err), "code")         // naming the code
	select {
	case <-f.Done():
		t.Fatal("the login ended")
	default: // still waiting for its code
	}
	is.NoErr(f.SubmitCode(t.Context(), "fake-authorization-code")) // which comes next
	within(t, f.Done(), 20*time.Second, "the login settles")
	is.NoErr(f.Err()) // and completes it
}

func TestCancelEndsTheLoginAndItsProgram(t *testing.T) {
	is := is.New(t)
	s := newSetup(t)
	rt := s.start(t)
	f := login(t, rt, "claudeai")
	is.True(len(s.left()) > 0) // the login runs
	f.Cancel()
	within(t, f.Done(), 10*time.Second, "the login settles")
	is.True(strings.Contains(hub.MessageOf(f.Err()), "cancelled")) // as cancelled
	f.Cancel()                                                     // again: nothing more
	rt.Close()
	is.Equal(len(s.left()), 0) // its program is gone
}

func TestCloseEndsEveryLoginAndLeavesNothingRunning(t *testing.T) {
	is := is.New(t)
	s := newSetup(t)
	rt := s.start(t)
	a := login(t, rt, "claudeai")
	b := login(t, rt, "console")
	rt.Close()
	within(t, rt.Done(), time.Second, "the runtime is done")
	within(t, a.Done(), time.Second, "the first login settled")
	within(t, b.Done(), time.Second, "the second login settled")
	is.Equal(hub.KindOf(a.Err()), hub.Unavailable) // stopped
	is.Equal(len(s.left()), 0)                     // and nothing is left
	_, err := rt.Login(t.Context(), hub.AgentLoginStart{Agent: "claude", Target: "anthropic", Method: "claudeai"})
	is.Equal(hub.KindOf(err), hub.Unavailable) // a closed runtime starts no login
	is.Equal(len(s.left()), 0)                 // nor leaves one running
}

func TestALoginWhoseProgramDiesFailsAsUnavailable(t *testing.T) {
	is := is.New(t)
	s := newSetup(t)
	rt := s.start(t)
	f := login(t, rt, "claudeai")
	pids := s.left()
	is.Equal(len(pids), 1) // `claude auth login`
	p, err := os.FindProcess(pids[0])
	is.NoErr(err)      // found
	is.NoErr(p.Kill()) // and killed from outside
	within(t, f.Done(), 10*time.Second, "the login settles")
	is.Equal(hub.KindOf(f.Err()), hub.Unavailable) // unavailable: no code was entered
}

func TestALoginThatPrintsNoLinkIsBoundedByItsContext(t *testing.T) {
	is := is.New(t)
	s := newSetup(t, "WHARF_FAKE_CLAUDE_NO_LINK=1")
	rt := s.start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	_, err := rt.Login(ctx, hub.AgentLoginStart{Agent: "claude", Target: "anthropic", Method: "claudeai"})
	is.True(errors.Is(err, context.DeadlineExceeded)) // it fails when its context ends
	is.Equal(len(s.left()), 0)                        // and its program is gone
}

func TestLoginRefusesWhatClaudeCodeDoesNotOffer(t *testing.T) {
	for _, c := range []struct {
		name  string
		req   hub.AgentLoginStart
		field string
	}{
		{"another target", hub.AgentLoginStart{Target: "openai", Method: "claudeai"}, "target"},
		{"an unknown method", hub.AgentLoginStart{Target: "anthropic", Method: "sso"}, "method"},
		{"an environment method", hub.AgentLoginStart{Target: "anthropic", Method: "env-api-key"}, "method"},
		{"answers", hub.AgentLoginStart{Target: "anthropic", Method: "claudeai", Answers: map[string]string{"email": "a@b.c"}}, "answers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			s := newSetup(t)
			rt := s.start(t)
			_, err := rt.Login(t.Context(), c.req)
			is.Equal(hub.KindOf(err), hub.Invalid) // refused
			is.Equal(fieldOf(err), c.field)        // naming the input
		})
	}
}

func TestAKeyIsRefusedPointingAtTheEnvironment(t *testing.T) {
	is := is.New(t)
	s := newSetup(t)
	rt := s.start(t)
	err := rt.LoginWithKey(t.Context(), hub.AgentKeyLogin{Agent: "claude", Target: "anthropic", Method: "env-api-key", Key: "sk-ant-api03-typed"})
	is.Equal(hub.KindOf(err), hub.Invalid)                             // refused
	is.Equal(fieldOf(err), "key")                                      // naming the key
	is.True(strings.Contains(hub.MessageOf(err), "ANTHROPIC_API_KEY")) // saying where a key goes
	is.True(strings.Contains(hub.MessageOf(err), "environment"))       // the Hub's environment
	is.True(!strings.Contains(err.Error(), "sk-ant-api03-typed"))      // never repeating it
	is.True(!strings.Contains(s.log.String(), "sk-ant-api03-typed"))   // nor logging it
}

func TestActivateIsRefused(t *testing.T) {
	is := is.New(t)
	s := newSetup(t)
	rt := s.start(t)
	err := rt.Activate(t.Context(), hub.AgentCredentialRef{Agent: "claude", Target: "anthropic", Credential: "claudeai"})
	is.Equal(hub.KindOf(err), hub.Invalid) // Claude Code has one login at a time
}

func TestLogoutRefusesALoginNotInTheStore(t *testing.T) {
	for _, cred := range []string{"claudeai", "console", "nope"} {
		t.Run(cred, func(t *testing.T) {
			is := is.New(t)
			s := newSetup(t)
			rt := s.start(t)
			err := rt.Logout(t.Context(), hub.AgentCredentialRef{Agent: "claude", Target: "anthropic", Credential: cred})
			is.Equal(hub.KindOf(err), hub.Invalid) // refused
			is.Equal(fieldOf(err), "credential")   // naming the credential
		})
	}
}

func TestSubmitRedirectIsRefused(t *testing.T) {
	is := is.New(t)
	s := newSetup(t)
	rt := s.start(t)
	f := login(t, rt, "claudeai")
	err := f.SubmitRedirect(t.Context(), "http://localhost:1/callback?code=x")
	is.Equal(hub.KindOf(err), hub.Invalid) // a code login takes no address
	is.Equal(fieldOf(err), "address")      // naming the address
}

// fieldOf is the field an error names.
func fieldOf(err error) string {
	var he *hub.Error
	if errors.As(err, &he) && he.Details != nil {
		return he.Details.Field
	}
	return ""
}
