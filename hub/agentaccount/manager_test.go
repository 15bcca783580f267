package agentaccount_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/agentaccount"
)

// rig is a Manager over fake agents and a fake clock.
type rig struct {
	m      *agentaccount.Manager
	clock  *fakes.Clock
	agents []*fakes.FakeAgent
	told   chan string
}

func newRig(t *testing.T, agents ...*fakes.FakeAgent) *rig {
	t.Helper()
	if len(agents) == 0 {
		agents = []*fakes.FakeAgent{fakes.NewFakeAgent("alpha", "Alpha")}
	}
	r := &rig{clock: fakes.NewClock(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)), agents: agents, told: make(chan string, 16)}
	n := 0
	m, err := agentaccount.New(agentaccount.Config{Logins: fakes.NewAgentLogins(agents...), Clock: r.clock,
		NewID:   func() string { n++; return fmt.Sprintf("attempt-%d", n) },
		Changed: func(agent string) { r.told <- agent }})
	if err != nil {
		t.Fatal(err)
	}
	r.m = m
	t.Cleanup(m.Close)
	return r
}

// waitTold waits for the workspaces to be told of agent's change.
func (r *rig) waitTold(t *testing.T, agent string) {
	t.Helper()
	select {
	case got := <-r.told:
		if got != agent {
			t.Fatalf("told of %q, want %q", got, agent)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the workspaces were not told of %s's change", agent)
	}
}

// waitTimers waits until the fake clock holds at least n timers: a
// goroutine reached its wait.
func (r *rig) waitTimers(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for r.clock.Pending() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d timers, want %d", r.clock.Pending(), n)
		}
		runtime.Gosched()
	}
}

func kindOf(err error) hub.Kind { return hub.KindOf(err) }

func fieldOf(err error) string {
	var he *hub.Error
	if errors.As(err, &he) && he.Details != nil {
		return he.Details.Field
	}
	return ""
}

func attempt(l hub.AgentAccounts, id string) hub.AgentLoginAttempt {
	for _, a := range l.Attempts {
		if a.ID == id {
			return a
		}
	}
	return hub.AgentLoginAttempt{}
}

func TestAListingStartsEveryRuntimeAndReportsItsLogins(t *testing.T) {
	is := is.New(t)
	r := newRig(t, fakes.NewFakeAgent("alpha", "Alpha"), fakes.NewFakeAgent("beta", "Beta"))
	r.agents[1].AddEnvCredential("BETA_API_KEY")
	l, err := r.m.List(context.Background())
	is.NoErr(err)                                               // the listing answers
	is.Equal(len(l.Agents), 2)                                  // both agents
	is.Equal(l.Agents[0].Agent, "alpha")                        // in the drivers' order
	is.Equal(l.Agents[0].State, hub.AgentRuntimeReady)          // started and read
	is.Equal(len(l.Agents[0].Targets[0].Methods), 4)            // the methods the agent offers
	is.Equal(l.Agents[1].Targets[0].Credentials[0].Kind, "env") // the saved logins
	is.True(l.Agents[0].StatusAt > 0)                           // when it was read
	is.Equal(len(l.Attempts), 0)                                // no login in progress

	_, err = r.m.List(context.Background())
	is.NoErr(err)
	is.Equal(r.agents[0].Starts(), 1) // a running runtime is not started again
}

func TestAListingWaitsAtMostFourSecondsThenSaysStarting(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	r.agents[0].Hold()
	got := make(chan hub.AgentAccounts, 1)
	go func() {
		l, _ := r.m.List(context.Background())
		got <- l
	}()
	r.waitTimers(t, 1)
	r.clock.Advance(agentaccount.ListWait - time.Millisecond)
	select {
	case <-got:
		t.Fatal("the listing answered before its wait was over")
	default:
	}
	r.clock.Advance(time.Millisecond)
	l := <-got
	is.Equal(l.Agents[0].State, hub.AgentRuntimeStarting) // still starting: the client polls
	r.agents[0].Release()
	l, err := r.m.List(context.Background())
	is.NoErr(err)
	is.Equal(l.Agents[0].State, hub.AgentRuntimeReady) // the next listing finds it ready
}

func TestAnAgentNotInstalledIsListedSoAndRefusesLogins(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	r.agents[0].SetInstalled(false)
	l, err := r.m.List(context.Background())
	is.NoErr(err)
	is.Equal(l.Agents[0].State, hub.AgentRuntimeNotInstalled) // not installed
	is.True(strings.Contains(l.Agents[0].Message, "`alpha`")) // naming the command it looked for
	_, err = r.m.Start(context.Background(), hub.AgentLoginStart{Agent: "alpha", Target: fakes.FakeTarget, Method: fakes.FakeCodeMethod})
	is.Equal(kindOf(err), hub.Conflict) // 409: the agent is not ready
	r.agents[0].SetInstalled(true)
	l, _ = r.m.List(context.Background())
	is.Equal(l.Agents[0].State, hub.AgentRuntimeReady) // installed later: found on the next request
}

func TestAKeyLoginSavesTheLoginAndARefusalNeverEchoesTheKey(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	_, err := r.m.Key(context.Background(), hub.AgentKeyLogin{Agent: "alpha", Target: fakes.FakeTarget, Method: fakes.FakeKeyMethod, Key: "wrong-secret-key"})
	is.Equal(kindOf(err), hub.Invalid)                            // the agent refused it: 400
	is.Equal(fieldOf(err), "key")                                 // naming the field
	is.True(!strings.Contains(err.Error(), "wrong-secret-key"))   // the echoed key is redacted
	is.True(strings.Contains(err.Error(), agentaccount.Redacted)) // and says so

	l, err := r.m.Key(context.Background(), hub.AgentKeyLogin{Agent: "alpha", Target: fakes.FakeTarget, Method: fakes.FakeKeyMethod, Key: "sk-good"})
	is.NoErr(err)                                               // accepted
	is.Equal(l.Agents[0].Targets[0].Credentials[0].Kind, "key") // the answer lists the new login
	r.waitTold(t, "alpha")                                      // and the workspaces are told
}

func TestACodeLoginCompletesWithTheCodeAndANewStartReplacesTheOld(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	ctx := context.Background()
	start := hub.AgentLoginStart{Agent: "alpha", Target: fakes.FakeTarget, Method: fakes.FakeCodeMethod}
	l, err := r.m.Start(ctx, start)
	is.NoErr(err)
	first := l.Attempts[0]
	is.Equal(first.State, hub.AttemptPending)                                                  // pending
	is.Equal(first.Completion, hub.CompletionCode)                                             // finished with a code
	is.True(strings.HasPrefix(first.URL, "https://"))                                          // with the page to open
	is.Equal(first.ExpiresAt-first.StartedAt, int64(agentaccount.AttemptTTL/time.Millisecond)) // ten minutes

	l, err = r.m.Start(ctx, start)
	is.NoErr(err)
	is.Equal(len(l.Attempts), 2)                               // both listed
	is.Equal(attempt(l, first.ID).State, hub.AttemptCancelled) // the earlier one cancelled
	second := l.Attempts[1]
	is.Equal(second.State, hub.AttemptPending) // the new one pending

	l, err = r.m.SubmitCode(ctx, second.ID, "code-not-this-one")
	is.NoErr(err)
	got := attempt(l, second.ID)
	is.Equal(got.State, hub.AttemptFailed)                       // the agent refused the code
	is.True(!strings.Contains(got.Message, "code-not-this-one")) // its message never repeats it
	_, err = r.m.SubmitCode(ctx, second.ID, "code-x")
	is.Equal(kindOf(err), hub.NotFound) // a settled login takes no code: 404

	l, _ = r.m.Start(ctx, start)
	third := l.Attempts[len(l.Attempts)-1]
	code := "code-" + strings.Split(third.URL, "state=")[1]
	l, err = r.m.SubmitCode(ctx, third.ID, code)
	is.NoErr(err)
	is.Equal(attempt(l, third.ID).State, hub.AttemptComplete) // logged in
	is.True(l.Agents[0].Targets[0].Connected)                 // and the same answer lists the login
	r.waitTold(t, "alpha")                                    // the workspaces are told
}

func TestARedirectIsDeliveredOnlyToTheAttemptsOwnCallback(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	ctx := context.Background()
	l, err := r.m.Start(ctx, hub.AgentLoginStart{Agent: "alpha", Target: fakes.FakeTarget, Method: fakes.FakeRedirectMethod})
	is.NoErr(err)
	at := l.Attempts[0]
	is.Equal(at.Completion, hub.CompletionRedirect) // a loopback redirect_uri
	state := strings.Split(strings.Split(at.URL, "state=")[1], "&")[0]
	for _, bad := range []string{
		"http://localhost:1456/auth/callback?code=code-" + state, // another port
		"http://localhost:1455/other?code=code-" + state,         // another path
		"https://localhost:1455/auth/callback?code=x",            // not http
		"http://evil.example:1455/auth/callback?code=x",          // not loopback
		"http://user:pw@localhost:1455/auth/callback?code=x",     // userinfo
	} {
		_, err := r.m.SubmitRedirect(ctx, at.ID, bad)
		is.Equal(kindOf(err), hub.Invalid)              // refused
		is.Equal(fieldOf(err), "address")               // on the address
		is.True(!strings.Contains(err.Error(), "1456")) // never repeating it
		is.True(!strings.Contains(err.Error(), "evil")) // never repeating it
	}
	is.Equal(len(r.agents[0].Delivered()), 0) // nothing was requested

	l, err = r.m.SubmitRedirect(ctx, at.ID, "http://127.0.0.1:1455/auth/callback?code=code-"+state+"&state="+state)
	is.NoErr(err)
	is.Equal(attempt(l, at.ID).State, hub.AttemptComplete) // logged in
	d := r.agents[0].Delivered()
	is.Equal(len(d), 1)                                                                    // requested once
	is.Equal(d[0], "http://localhost:1455/auth/callback?code=code-"+state+"&state="+state) // on the recorded host, with the pasted query
}

func TestADeviceLoginCompletesWhenThePersonApproves(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	l, err := r.m.Start(context.Background(), hub.AgentLoginStart{Agent: "alpha", Target: fakes.FakeTarget, Method: fakes.FakeDeviceMethod})
	is.NoErr(err)
	is.Equal(l.Attempts[0].Completion, hub.CompletionDevice) // nothing to paste
	is.True(l.Attempts[0].UserCode != "")                    // a code to enter on the page
	_, err = r.m.SubmitCode(context.Background(), l.Attempts[0].ID, "code-1")
	is.Equal(fieldOf(err), "code") // a device login takes no code
	is.True(r.agents[0].Approve()) // the person approves
	r.waitTold(t, "alpha")
	l, _ = r.m.List(context.Background())
	is.Equal(l.Attempts[0].State, hub.AttemptComplete) // complete
}

func TestAnAttemptExpiresAfterTenMinutesAndLeavesTheListingFiveLater(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	ctx := context.Background()
	l, _ := r.m.Start(ctx, hub.AgentLoginStart{Agent: "alpha", Target: fakes.FakeTarget, Method: fakes.FakeCodeMethod})
	id := l.Attempts[0].ID
	r.clock.Advance(agentaccount.AttemptTTL)
	l, _ = r.m.List(ctx)
	is.Equal(attempt(l, id).State, hub.AttemptExpired) // expired
	_, err := r.m.SubmitCode(ctx, id, "code-s1")
	is.Equal(kindOf(err), hub.NotFound) // 404 "That login is no longer in progress."
	r.clock.Advance(agentaccount.SettledVisible)
	l, _ = r.m.List(ctx)
	is.Equal(len(l.Attempts), 0) // gone from the listing
}

func TestAnIdleRuntimeStopsButNeverWhileALoginIsPending(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	ctx := context.Background()
	l, _ := r.m.Start(ctx, hub.AgentLoginStart{Agent: "alpha", Target: fakes.FakeTarget, Method: fakes.FakeCodeMethod})
	r.clock.Advance(agentaccount.IdleStop)
	is.True(r.agents[0].Running()) // a pending login keeps it
	_, err := r.m.Cancel(ctx, l.Attempts[0].ID)
	is.NoErr(err)
	r.clock.Advance(agentaccount.IdleStop)
	waitUntil(t, func() bool { return !r.agents[0].Running() }) // idle five minutes with nothing pending: stopped
	l, _ = r.m.List(ctx)
	is.Equal(l.Agents[0].State, hub.AgentRuntimeReady) // and the next request starts it again
	is.Equal(r.agents[0].Starts(), 2)
}

func TestARuntimeThatDiesIsUnavailableAndRestartsOnTheNextRequest(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	ctx := context.Background()
	l, _ := r.m.Start(ctx, hub.AgentLoginStart{Agent: "alpha", Target: fakes.FakeTarget, Method: fakes.FakeCodeMethod})
	id := l.Attempts[0].ID
	r.agents[0].Crash()
	waitUntil(t, func() bool { return attempt(r.list(t), id).State != hub.AttemptPending })
	is.Equal(attempt(r.list(t), id).State, hub.AttemptFailed) // its login failed with it
	// Once the Hub has seen the runtime end (its watcher runs on its own
	// goroutine), the next request starts another.
	waitUntil(t, func() bool { return r.list(t).Agents[0].State == hub.AgentRuntimeReady && r.agents[0].Starts() == 2 })
	is.True(r.agents[0].Running()) // restarted
}

// list reads the listing.
func (r *rig) list(t *testing.T) hub.AgentAccounts {
	t.Helper()
	l, err := r.m.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// waitUntil waits, boundedly, for cond: what a goroutine of the Manager
// does after the test's step returned.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the condition did not come true")
		}
		runtime.Gosched()
	}
}

func TestLogoutRefusesALoginTheHubCannotRemove(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	ctx := context.Background()
	r.agents[0].AddEnvCredential("ALPHA_API_KEY")
	_, err := r.m.Logout(ctx, hub.AgentCredentialRef{Agent: "alpha", Target: fakes.FakeTarget, Credential: "env:ALPHA_API_KEY"})
	is.Equal(kindOf(err), hub.Invalid)                              // refused
	is.Equal(fieldOf(err), "credential")                            // naming the credential
	is.True(strings.Contains(err.Error(), "the Hub's environment")) // and why

	_, err = r.m.Key(ctx, hub.AgentKeyLogin{Agent: "alpha", Target: fakes.FakeTarget, Method: fakes.FakeKeyMethod, Key: "sk-one"})
	is.NoErr(err)
	r.waitTold(t, "alpha")
	_, err = r.m.Key(ctx, hub.AgentKeyLogin{Agent: "alpha", Target: fakes.FakeTarget, Method: fakes.FakeKeyMethod, Key: "sk-two"})
	is.NoErr(err)
	r.waitTold(t, "alpha")
	l, err := r.m.Activate(ctx, hub.AgentCredentialRef{Agent: "alpha", Credential: "key-1"})
	is.NoErr(err)                                         // activate finds the credential's target
	is.True(l.Agents[0].Targets[0].Credentials[1].Active) // key-1 is active
	r.waitTold(t, "alpha")
	l, err = r.m.Logout(ctx, hub.AgentCredentialRef{Agent: "alpha", Target: fakes.FakeTarget, Credential: "key-1"})
	is.NoErr(err)
	is.Equal(len(l.Agents[0].Targets[0].Credentials), 2) // removed: the env login and key-2 stay
	r.waitTold(t, "alpha")
}

func TestAClosedManagerRefusesEverything(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	_, _ = r.m.List(context.Background())
	r.m.Close()
	is.True(!r.agents[0].Running()) // the runtime is stopped
	_, err := r.m.List(context.Background())
	is.Equal(kindOf(err), hub.Unavailable) // 503 while shutting down
	_, err = r.m.Start(context.Background(), hub.AgentLoginStart{Agent: "alpha", Target: "t", Method: "m"})
	is.Equal(kindOf(err), hub.Conflict) // 409: not ready
}

func TestARefusedStartLeavesThePendingLoginAlone(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	ctx := context.Background()
	l, _ := r.m.Start(ctx, hub.AgentLoginStart{Agent: "alpha", Target: fakes.FakeTarget, Method: fakes.FakeCodeMethod})
	id := l.Attempts[0].ID
	_, err := r.m.Start(ctx, hub.AgentLoginStart{Agent: "alpha", Target: fakes.FakeTarget, Method: "no-such-method"})
	is.Equal(fieldOf(err), "method") // refused on the method
	_, err = r.m.Start(ctx, hub.AgentLoginStart{Agent: "alpha", Target: fakes.FakeTarget, Method: fakes.FakeKeyMethod})
	is.Equal(fieldOf(err), "method") // a key method does not start a browser login
	_, err = r.m.Key(ctx, hub.AgentKeyLogin{Agent: "alpha", Target: "elsewhere", Method: fakes.FakeKeyMethod, Key: "sk-x"})
	is.Equal(fieldOf(err), "target") // an unknown provider
	l, _ = r.m.List(ctx)
	is.Equal(attempt(l, id).State, hub.AttemptPending) // the earlier login still waits
}

func TestAnAgentsOwnLoginIsLoggedOutByItsTargetWhereItListsNone(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	ctx := context.Background()
	_, err := r.m.Logout(ctx, hub.AgentCredentialRef{Agent: "alpha", Target: fakes.FakeTarget, Credential: fakes.FakeTarget})
	is.Equal(hub.MessageOf(err), "No such saved login.") // the agent itself was asked (the fake's words), not refused by the Hub
}

func TestLoginsStartedInALoopKeepABoundedListing(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	ctx := context.Background()
	var last hub.AgentAccounts
	for range 3 * agentaccount.MaxSettled {
		l, err := r.m.Start(ctx, hub.AgentLoginStart{Agent: "alpha", Target: fakes.FakeTarget, Method: fakes.FakeCodeMethod})
		is.NoErr(err) // each start cancels the one before
		last = l
	}
	is.Equal(len(last.Attempts), agentaccount.MaxSettled+1)                 // the pending one and the newest settled ones
	is.Equal(last.Attempts[len(last.Attempts)-1].State, hub.AttemptPending) // the newest is the pending one
	is.Equal(r.clock.Pending() <= agentaccount.MaxSettled+3, true)          // the dropped attempts' timers went with them
}
