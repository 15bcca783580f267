package service_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// loggedEnv is newEnv whose Hub logs into the buffer returned, read once
// the calls that log have returned.
func loggedEnv(t *testing.T) (*env, *bytes.Buffer) {
	t.Helper()
	e := newEnv(t)
	e.Hub.Close() // nothing runs yet: the Hub is swapped for one that logs
	logs := new(bytes.Buffer)
	h, err := service.New(service.Config{Password: cheap, Logger: slog.New(slog.NewTextHandler(logs, nil))},
		service.Ports{Store: e.store, Clock: e.clock, FS: e.fs, Git: e.git, Backend: e.backend, Vault: e.vault, Tools: e.tools,
			AgentLogins: fakes.NewAgentLogins(e.agent), Pusher: e.pusher})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	e.Hub = h
	if err := h.Recover(e.ctx); err != nil {
		t.Fatal(err)
	}
	return e, logs
}

// running registers and starts n workspaces, and returns their ids.
func (e *env) running(n int) []string {
	e.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.register(e.repo(fmt.Sprintf("/home/ann/w%d", i)))
		e.start(ids[i])
	}
	return ids
}

func TestEveryRunningSessionIsToldOfAnAgentsLoginAndNoStoppedOne(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	ids := e.running(3)
	_, err := e.StopWorkspace(e.ctx, ids[2])
	is.NoErr(err)
	idle := e.register(e.repo("/home/ann/never-started"))

	e.AgentLoginChanged(e.ctx, "codex")
	is.Equal(e.backend.AgentLoginsTold(ids[0]), []string{"codex"}) // a running session is told
	is.Equal(e.backend.AgentLoginsTold(ids[1]), []string{"codex"}) // every one
	is.Equal(len(e.backend.AgentLoginsTold(ids[2])), 0)            // a stopped one is not even asked
	is.Equal(len(e.backend.AgentLoginsTold(idle)), 0)              // nor one never started

	e.backend.Crash(ids[1])
	e.AgentLoginChanged(e.ctx, "claude")
	is.Equal(e.backend.AgentLoginsTold(ids[0]), []string{"codex", "claude"}) // told again
	is.Equal(e.backend.AgentLoginsTold(ids[1]), []string{"codex"})           // but not the session that died
}

func TestASessionThatDoesNotTakeTheChangeIsLoggedAndTheOthersAreTold(t *testing.T) {
	is := is.New(t)
	e, logs := loggedEnv(t)
	ids := e.running(3)
	e.backend.FailAgentLogins(ids[0], hub.Errorf(hub.Unavailable, "session unreachable"))

	e.AgentLoginChanged(e.ctx, "gemini") // returns, with nothing to report
	for _, id := range ids {
		is.Equal(e.backend.AgentLoginsTold(id), []string{"gemini"}) // every session was told
	}
	out := logs.String()
	is.Equal(strings.Count(out, "level=WARN"), 1)       // one warning
	is.True(strings.Contains(out, "workspace="+ids[0])) // naming the session's workspace
	is.True(!strings.Contains(out, "gemini"))           // and no other id
	is.True(e.Running(ids[0]))                          // the session runs on
}

// Nine sessions that never answer: eight are asked at once, each given
// up on after 5 s of the Hub's clock, then the ninth.
func TestAtMostEightSessionsAreToldAtOnceEachWithinFiveSeconds(t *testing.T) {
	is := is.New(t)
	e, logs := loggedEnv(t)
	ids := e.running(9)
	release := e.backend.HoldAgentLogins()
	t.Cleanup(release)
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.AgentLoginChanged(ctx, "opencode")
	}()

	is.NoErr(e.backend.WaitAgentLogins(ctx, 8, 8)) // eight asked, all waiting
	e.clock.Advance(5*time.Second - time.Millisecond)
	is.True(!closedNow(done)) // not given up on before 5 s
	e.clock.Advance(time.Millisecond)
	is.NoErr(e.backend.WaitAgentLogins(ctx, 9, 1)) // at 5 s they are, and the ninth is asked
	is.True(!closedNow(done))                      // while the call waits for it
	e.clock.Advance(5 * time.Second)
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("AgentLoginChanged did not return once every session was given up on")
	}
	is.Equal(e.backend.MostAgentLoginsAtOnce(), 8) // never more than eight at once
	told := 0
	for _, id := range ids {
		told += len(e.backend.AgentLoginsTold(id))
	}
	is.Equal(told, 9)                                       // each session once
	is.Equal(strings.Count(logs.String(), "level=WARN"), 9) // each silence logged
}

func TestClosingTheHubEndsTheWaitForSessions(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.running(1)
	release := e.backend.HoldAgentLogins()
	t.Cleanup(release)
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.AgentLoginChanged(context.Background(), "claude")
	}()
	is.NoErr(e.backend.WaitAgentLogins(ctx, 1, 1))
	is.NoErr(e.Hub.Close())
	select {
	case <-done: // its session was stopped, or the Hub's close cut it
	case <-ctx.Done():
		t.Fatal("AgentLoginChanged outlived the Hub")
	}
	is.True(!errors.Is(ctx.Err(), context.DeadlineExceeded)) // well before the deadline
}

// closedNow reports whether ch is closed, without waiting.
func closedNow(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestALoginLogoutOrActivateTellsEveryRunningWorkspace(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	ids := e.running(2)
	told := func(n int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
		defer cancel()
		is.NoErr(e.backend.WaitAgentLogins(ctx, n, 0)) // every running session was told, and the calls ended
	}
	_, err := e.ConnectAgentAccountKey(e.ctx, hub.AgentKeyLogin{Agent: "codex", Target: fakes.FakeTarget, Method: fakes.FakeKeyMethod, Key: "sk-one"})
	is.NoErr(err) // a key login
	told(2)
	_, err = e.ConnectAgentAccountKey(e.ctx, hub.AgentKeyLogin{Agent: "codex", Target: fakes.FakeTarget, Method: fakes.FakeKeyMethod, Key: "sk-two"})
	is.NoErr(err)
	told(4)
	_, err = e.ActivateAgentAccountCredential(e.ctx, hub.AgentCredentialRef{Agent: "codex", Credential: "key-1"})
	is.NoErr(err) // an activate
	told(6)
	_, err = e.LogoutAgentAccount(e.ctx, hub.AgentCredentialRef{Agent: "codex", Target: fakes.FakeTarget, Credential: "key-1"})
	is.NoErr(err) // a logout
	told(8)
	for _, id := range ids {
		is.Equal(e.backend.AgentLoginsTold(id), []string{"codex", "codex", "codex", "codex"}) // each told of every change
	}
	_, err = e.ConnectAgentAccountKey(e.ctx, hub.AgentKeyLogin{Agent: "codex", Target: fakes.FakeTarget, Method: fakes.FakeKeyMethod, Key: "refused"})
	is.True(err != nil) // a refused login
	for _, id := range ids {
		is.Equal(len(e.backend.AgentLoginsTold(id)), 4) // tells nobody
	}
}
