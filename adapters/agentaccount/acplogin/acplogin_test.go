package acplogin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/acplogin"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

// deadline bounds every wait of these tests.
const deadline = 30 * time.Second

func TestMain(m *testing.M) {
	code := m.Run()
	if bin, err := acplogin.ScriptedAgent(); err == nil {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

// agentBin is the scripted ACP agent (fakes/acpagent).
func agentBin(t *testing.T) string {
	t.Helper()
	bin, err := acplogin.ScriptedAgent()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// baseEnv is a runtime's environment: the test's PATH and a fresh HOME.
func baseEnv(t *testing.T) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
}

// custom is a scripted agent added as `--agent custom=…`, with these
// flags of fakes/acpagent and its --state in state.
func custom(t *testing.T, state string, env []string, log *slog.Logger, flags ...string) hub.AgentLoginDriver {
	return acplogin.New(acplogin.Options{ID: "custom", Name: "Custom", Env: env, Logger: log,
		Command: append([]string{agentBin(t), "--state", state}, flags...)})
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	t.Cleanup(cancel)
	return ctx
}

func start(t *testing.T, d hub.AgentLoginDriver) hub.AgentLoginRuntime {
	t.Helper()
	rt, err := d.Start(ctxFor(t))
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(rt.Close)
	return rt
}

func waitDone(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(deadline):
		t.Fatal("not done in time")
	}
}

// fieldOf is the field an Invalid error names.
func fieldOf(err error) string {
	var he *hub.Error
	if errors.As(err, &he) && he.Details != nil {
		return he.Details.Field
	}
	return ""
}

func TestACustomAgentPassesTheAgentLoginSuite(t *testing.T) {
	porttest.AgentLoginDriver(t, func(t *testing.T) porttest.AgentLoginScene {
		return scene{custom(t, t.TempDir(), baseEnv(t), nil, "--auth-methods", "terminal,env:WHARF_SUITE_KEY,agent", "--logout")}
	})
}

// scene is a custom agent for the suite: no key, no browser login.
type scene struct{ d hub.AgentLoginDriver }

func (s scene) Driver() hub.AgentLoginDriver { return s.d }
func (s scene) Missing() hub.AgentLoginDriver {
	return acplogin.New(acplogin.Options{ID: "custom", Name: "Custom", Command: []string{"wharf-no-such-acp-agent", "--acp"},
		Env: []string{"PATH=" + os.Getenv("PATH")}})
}
func (s scene) Target() string             { return "custom" }
func (s scene) KeyLogin() (string, string) { return "", "" }
func (s scene) BrowserLogin() string       { return "" }
func (s scene) Finish(t *testing.T, _ hub.AgentLoginChallenge) string {
	t.Fatal("a custom agent has no browser login")
	return ""
}

func TestTheStatusListsWhatInitializeDeclared(t *testing.T) {
	is := is.New(t)
	bin, state := agentBin(t), t.TempDir()
	d := custom(t, state, baseEnv(t), nil, "--auth-methods", "terminal,env:WHARF_K1+WHARF_K2?,agent", "--logout")
	is.Equal(d.Agent(), hub.AgentLoginAgent{ID: "custom", Name: "Custom", Command: bin}) // no login command known before it starts
	rt := start(t, d)
	st, err := rt.Status(ctxFor(t))
	is.NoErr(err)
	own := bin + " --state " + state + " --auth-methods 'terminal,env:WHARF_K1+WHARF_K2?,agent' --logout"
	is.Equal(st, hub.AgentLoginStatus{Version: "1",
		Capabilities: hub.AgentAccountCapabilities{Login: false, Logout: true, Activate: false},
		Targets: []hub.AgentLoginTarget{{ID: "custom", Name: "Custom", Connected: false, Credentials: []hub.AgentCredential{},
			Methods: []hub.AgentLoginMethod{
				{ID: "terminal-login", Kind: hub.AgentMethodCommand, Label: "Log in in a terminal", Command: "ACPAGENT_LOGIN=1 " + own + " --login"},
				{ID: "env-WHARF_K1", Kind: hub.AgentMethodEnv, Label: "WHARF_K1 key", Variables: []string{"WHARF_K1", "WHARF_K2"}},
				{ID: "agent-login", Kind: hub.AgentMethodCommand, Label: "Log in inside Custom: Log in with acpagent", Command: own},
			}}}}) // each declared method, as the Hub shows it
	is.Equal(d.Agent().LoginCommand, "ACPAGENT_LOGIN=1 "+own+" --login") // the terminal method is the login command
}

func TestAnAgentDeclaringNothingListsItsTargetAlone(t *testing.T) {
	is := is.New(t)
	d := custom(t, t.TempDir(), baseEnv(t), nil)
	rt := start(t, d)
	st, err := rt.Status(ctxFor(t))
	is.NoErr(err)
	is.Equal(len(st.Targets), 1)                              // the agent is its one target
	is.Equal(len(st.Targets[0].Methods), 0)                   // with no method
	is.Equal(st.Capabilities, hub.AgentAccountCapabilities{}) // and nothing the Hub can do
	is.Equal(d.Agent().LoginCommand, "")                      // nor a login command
	err = rt.Logout(ctxFor(t), hub.AgentCredentialRef{Target: "custom", Credential: "custom"})
	is.Equal(hub.KindOf(err), hub.Invalid)                              // logout is refused
	is.Equal(fieldOf(err), "agent")                                     // as the agent's
	is.True(strings.Contains(hub.MessageOf(err), "on the Hub machine")) // saying where to do it
}

func TestEnvironmentLoginsAreListedByNameOnly(t *testing.T) {
	const secret = "sk-acplogin-secret-value"
	methods := "env:WHARF_K1+WHARF_K2?,env:WHARF_K3"
	for _, tc := range []struct {
		name string
		set  []string
		want []hub.AgentCredential
	}{
		{"nothing set lists no login", nil, []hub.AgentCredential{}},
		{"an empty variable is not set", []string{"WHARF_K1="}, []hub.AgentCredential{}},
		{"an optional variable alone is no login", []string{"WHARF_K2=" + secret}, []hub.AgentCredential{}},
		{"the required variable is a login", []string{"WHARF_K1=" + secret}, []hub.AgentCredential{
			{ID: "env:env-WHARF_K1", Label: "WHARF_K1 key", Kind: hub.AgentCredentialEnv, Active: true, Variables: []string{"WHARF_K1"}}}},
		{"a set optional variable is named too", []string{"WHARF_K1=" + secret, "WHARF_K2=" + secret}, []hub.AgentCredential{
			{ID: "env:env-WHARF_K1", Label: "WHARF_K1 key", Kind: hub.AgentCredentialEnv, Active: true, Variables: []string{"WHARF_K1", "WHARF_K2"}}}},
		{"the first login is the active one", []string{"WHARF_K3=" + secret, "WHARF_K1=" + secret}, []hub.AgentCredential{
			{ID: "env:env-WHARF_K1", Label: "WHARF_K1 key", Kind: hub.AgentCredentialEnv, Active: true, Variables: []string{"WHARF_K1"}},
			{ID: "env:env-WHARF_K3", Label: "WHARF_K3 key", Kind: hub.AgentCredentialEnv, Active: false, Variables: []string{"WHARF_K3"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			d := custom(t, t.TempDir(), append(baseEnv(t), tc.set...), log, "--auth-methods", methods)
			rt := start(t, d)
			st, err := rt.Status(ctxFor(t))
			is.NoErr(err)
			tg := st.Targets[0]
			is.Equal(tg.Credentials, tc.want)        // the logins the environment holds
			is.Equal(tg.Connected, len(tc.want) > 0) // connected when it holds one
			b, _ := json.Marshal(st)
			is.True(!bytes.Contains(b, []byte(secret))) // never a value in the status
			err = rt.LoginWithKey(ctxFor(t), hub.AgentKeyLogin{Target: "custom", Method: "env-WHARF_K1", Key: secret})
			is.True(!strings.Contains(err.Error(), secret)) // nor in an error
			rt.Close()
			is.True(!strings.Contains(logs.String(), secret)) // nor in the logs
		})
	}
}

func TestKeyAndBrowserLoginsAreRefusedSayingWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		name, methods string
		says          []string
	}{
		{"with variables and a terminal", "agent,env:WHARF_K1+WHARF_K2,terminal", []string{"set WHARF_K1 and WHARF_K2 where the Hub runs", "ACPAGENT_LOGIN=1 ", " --login` in a terminal on the Hub machine"}},
		{"with the agent's own login only", "agent", []string{"log in inside Custom on the Hub machine"}},
		{"with nothing declared", "", []string{"log Custom in on the Hub machine"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			rt := start(t, custom(t, t.TempDir(), baseEnv(t), nil, "--auth-methods", tc.methods))
			err := rt.LoginWithKey(ctxFor(t), hub.AgentKeyLogin{Target: "custom", Method: "key", Key: "sk-never-shown"})
			is.Equal(hub.KindOf(err), hub.Invalid)                        // a key login is refused
			is.Equal(fieldOf(err), "method")                              // naming the method
			is.True(strings.Contains(hub.MessageOf(err), "takes no key")) // saying why
			is.True(!strings.Contains(err.Error(), "sk-never-shown"))     // never with the key
			flow, err := rt.Login(ctxFor(t), hub.AgentLoginStart{Target: "custom", Method: "agent-login"})
			is.True(flow == nil)                                                           // no browser login starts
			is.Equal(hub.KindOf(err), hub.Invalid)                                         // it is refused
			is.Equal(fieldOf(err), "method")                                               // naming the method
			is.True(strings.Contains(hub.MessageOf(err), "hands no sign-in address back")) // saying why
			for _, s := range tc.says {
				is.True(strings.Contains(hub.MessageOf(err), s)) // and what to do instead
			}
			err = rt.Activate(ctxFor(t), hub.AgentCredentialRef{Target: "custom", Credential: "custom"})
			is.Equal(hub.KindOf(err), hub.Invalid) // nothing to activate
			is.Equal(fieldOf(err), "agent")
		})
	}
}

func TestLogoutAsksTheAgentOnce(t *testing.T) {
	is := is.New(t)
	state := t.TempDir()
	rt := start(t, custom(t, state, baseEnv(t), nil, "--logout"))
	is.NoErr(rt.Logout(ctxFor(t), hub.AgentCredentialRef{Agent: "custom", Target: "custom", Credential: "custom"})) // the agent's own login
	b, err := os.ReadFile(filepath.Join(state, "logouts"))
	is.NoErr(err)
	is.Equal(string(b), "logout\n") // reached the agent, once
}

func TestLogoutsTheAgentCannotDoAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name, flags, target, credential, field, says string
	}{
		{"an agent declaring no logout", "", "custom", "custom", "agent", "declares no logout"},
		{"another target", "--logout", "other", "custom", "target", "no such provider"},
		{"a login from the environment", "--logout", "custom", "env:env-WHARF_K1", "credential", "unset WHARF_K1 where the Hub runs"},
		{"an unknown login", "--logout", "custom", "saved-1", "credential", "no such saved login"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			state := t.TempDir()
			flags := []string{"--auth-methods", "env:WHARF_K1"}
			if tc.flags != "" {
				flags = append(flags, tc.flags)
			}
			rt := start(t, custom(t, state, append(baseEnv(t), "WHARF_K1=sk-x"), nil, flags...))
			err := rt.Logout(ctxFor(t), hub.AgentCredentialRef{Target: tc.target, Credential: tc.credential})
			is.Equal(hub.KindOf(err), hub.Invalid)                 // refused
			is.Equal(fieldOf(err), tc.field)                       // naming the input
			is.True(strings.Contains(hub.MessageOf(err), tc.says)) // saying why
			_, err = os.Stat(filepath.Join(state, "logouts"))
			is.True(errors.Is(err, os.ErrNotExist)) // the agent was not asked
		})
	}
}

func TestCloseLeavesNoProcess(t *testing.T) {
	is := is.New(t)
	rt := start(t, custom(t, t.TempDir(), baseEnv(t), nil, "--logout"))
	pid := acplogin.Pid(rt)
	is.True(!exits(t, pid, 0)) // the agent runs, in its own group
	rt.Close()
	waitDone(t, rt.Done())
	is.True(groupGone(t, pid)) // and is gone with its group once Close returns
	_, err := rt.Status(ctxFor(t))
	is.Equal(hub.KindOf(err), hub.Unavailable) // a closed runtime answers nothing
	err = rt.Logout(ctxFor(t), hub.AgentCredentialRef{Target: "custom", Credential: "custom"})
	is.Equal(hub.KindOf(err), hub.Unavailable) // nor logs out
	rt.Close()                                 // again: nothing happens
}

func TestACrashedAgentEndsItsRuntime(t *testing.T) {
	is := is.New(t)
	rt := start(t, custom(t, t.TempDir(), baseEnv(t), nil, "--logout"))
	pid := acplogin.Pid(rt)
	is.NoErr(syscall.Kill(pid, syscall.SIGKILL))
	waitDone(t, rt.Done()) // Done closes on its own
	is.True(groupGone(t, pid))
	_, err := rt.Status(ctxFor(t))
	is.Equal(hub.KindOf(err), hub.Unavailable) // the runtime is unavailable
	err = rt.Logout(ctxFor(t), hub.AgentCredentialRef{Target: "custom", Credential: "custom"})
	is.Equal(hub.KindOf(err), hub.Unavailable)
}
