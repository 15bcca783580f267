package codex_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/codex"
	"github.com/wharfhub/wharf/hub"
)

func TestTheDriverNamesCodex(t *testing.T) {
	is := is.New(t)
	a := codex.New(codex.Options{}).Agent()
	is.Equal(a, hub.AgentLoginAgent{ID: "codex", Name: "Codex", Command: "codex", LoginCommand: "codex login"}) // the agent's identity
}

func TestACodexNotOnThePathIsNotInstalled(t *testing.T) {
	is := is.New(t)
	d := codex.New(codex.Options{Env: []string{"PATH=" + t.TempDir()}})
	_, err := d.Start(ctxFor(t))
	is.True(errors.Is(err, hub.ErrAgentNotInstalled))                      // not installed
	is.True(strings.Contains(hub.MessageOf(err), "`codex` was not found")) // the message names the command
}

func TestANewRuntimeReadsThatNothingIsLoggedIn(t *testing.T) {
	is := is.New(t)
	f := newFake(t)
	rt := f.start()
	st, err := rt.Status(ctxFor(t))
	is.NoErr(err)                                                                       // codex answered account/read
	is.Equal(st.Version, "0.0.0-fake")                                                  // from initialize's user agent
	is.Equal(st.Capabilities, hub.AgentAccountCapabilities{Login: true, Logout: true})  // one login, nothing to activate
	is.Equal(st.Account, &hub.AgentVendorAccount{Source: "none"})                       // no login
	is.Equal(len(st.Targets), 1)                                                        // one target
	is.Equal(st.Targets[0].ID, "openai")                                                // OpenAI's
	is.True(!st.Targets[0].Connected)                                                   // not connected
	is.Equal(len(st.Targets[0].Credentials), 0)                                         // nothing saved
	is.Equal(f.recorded("call"), []string{"initialize", "initialized", "account/read"}) // the handshake, then the read
}

func TestTheMethodsAreAKeyAndTwoChatGPTLogins(t *testing.T) {
	is := is.New(t)
	rt := newFake(t).start()
	st, err := rt.Status(ctxFor(t))
	is.NoErr(err) // read
	var got []string
	for _, m := range st.Targets[0].Methods {
		got = append(got, m.ID+" "+m.Kind+" "+string(m.Completion))
		is.True(m.Fields != nil && len(m.Fields) == 0) // no answer beyond the key
	}
	is.Equal(got, []string{"api-key key ", "chatgpt oauth redirect", "chatgpt-device oauth device"}) // key, browser, device code
}

func TestCloseLeavesNoProcessOfCodexsGroup(t *testing.T) {
	is := is.New(t)
	pidFile := filepath.Join(t.TempDir(), "child")
	f := newFake(t, "CODEXSERVER_CHILD="+pidFile)
	rt, err := f.driver().Start(ctxFor(t))
	is.NoErr(err) // started
	data, err := os.ReadFile(pidFile)
	is.NoErr(err) // the fake started a child in its group, as codex's node wrapper does
	child, err := strconv.Atoi(string(data))
	is.NoErr(err) // its pid
	pid := codex.PID(rt)
	rt.Close()
	settled(t, rt.Done(), "the runtime")
	is.True(groupGone(pid))     // the group is gone
	is.True(processGone(child)) // the child too
}

func TestACodexThatDiesClosesDoneAndSettlesItsLogins(t *testing.T) {
	is := is.New(t)
	f := newFake(t)
	rt := f.start()
	flow, err := rt.Login(ctxFor(t), hub.AgentLoginStart{Agent: "codex", Target: "openai", Method: "chatgpt"})
	is.NoErr(err) // a login is pending
	is.NoErr(syscall.Kill(codex.PID(rt), syscall.SIGKILL))
	settled(t, rt.Done(), "the runtime")
	settled(t, flow.Done(), "the login")
	is.Equal(hub.KindOf(flow.Err()), hub.Unavailable) // the login failed with the runtime
	_, err = rt.Status(ctxFor(t))
	is.Equal(hub.KindOf(err), hub.Unavailable)                     // a dead runtime is unavailable
	is.True(strings.Contains(f.log.String(), "exited on its own")) // and says so in the log
}

func TestACodexThatExitsDuringACallFailsTheCallAsUnavailable(t *testing.T) {
	is := is.New(t)
	rt := newFake(t, "CODEXSERVER_EXIT_ON=account/read").start()
	_, err := rt.Status(ctxFor(t))
	is.Equal(hub.KindOf(err), hub.Unavailable) // no answer: unavailable
	settled(t, rt.Done(), "the runtime")
}

func TestACodexThatExitsBeforeAnsweringDoesNotStart(t *testing.T) {
	is := is.New(t)
	_, err := newFake(t, "CODEXSERVER_EXIT_ON=initialize").driver().Start(ctxFor(t))
	is.Equal(hub.KindOf(err), hub.Unavailable)                    // not started
	is.True(strings.Contains(hub.MessageOf(err), "Codex exited")) // saying codex exited
}

func TestACallCodexNeverAnswersEndsAtTheCallersDeadline(t *testing.T) {
	is := is.New(t)
	rt := newFake(t, "CODEXSERVER_SILENT=account/read").start()
	ctx, cancel := context.WithTimeout(ctxFor(t), 200*time.Millisecond)
	defer cancel()
	_, err := rt.Status(ctx)
	is.Equal(hub.KindOf(err), hub.Unavailable)                    // unavailable
	is.Equal(hub.MessageOf(err), "Codex did not answer in time.") // saying why
}

func TestAStartThatCodexNeverAnswersEndsAtItsDeadlineAndLeavesNoProcess(t *testing.T) {
	is := is.New(t)
	pidFile := filepath.Join(t.TempDir(), "child")
	f := newFake(t, "CODEXSERVER_SILENT=initialize", "CODEXSERVER_CHILD="+pidFile)
	ctx, cancel := context.WithTimeout(ctxFor(t), 200*time.Millisecond)
	defer cancel()
	_, err := f.driver().Start(ctx)
	is.Equal(hub.KindOf(err), hub.Unavailable)           // not started
	is.Equal(f.recorded("call"), []string{"initialize"}) // the fake was asked to initialize
	data, err := os.ReadFile(pidFile)
	is.NoErr(err) // its child's pid
	child, err := strconv.Atoi(string(data))
	is.NoErr(err)
	is.True(processGone(child)) // nothing of it is left
}

func TestLinesOverTheBoundAreSkippedAndTheAnswerAfterThemIsRead(t *testing.T) {
	is := is.New(t)
	f := newFake(t, "CODEXSERVER_OVERLONG="+strconv.Itoa(codex.MaxLine+1))
	rt := f.start()
	st, err := rt.Status(ctxFor(t))
	is.NoErr(err)                       // the answer after an overlong line is read
	is.Equal(st.Account.Source, "none") // and understood
}

func TestARequestOfCodexsOwnIsAnsweredSoCodexDoesNotWait(t *testing.T) {
	is := is.New(t)
	f := newFake(t, "CODEXSERVER_ASK=1")
	rt := f.start()
	_, err := rt.Status(ctxFor(t))
	is.NoErr(err)                                                 // codex answered once its question was
	is.Equal(f.recorded("answer"), []string{`"fake-question-1"`}) // answered, with its own id
}
