package service_test

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/clone"
)

// cloneEvents waits for job id's result and returns every retained event.
func (e *env) cloneEvents(id string) []hub.CloneEvent {
	e.t.Helper()
	for range 200_000 {
		evs, ended, _, err := e.CloneJobEvents(e.ctx, e.ann, id, 0)
		if err != nil {
			e.t.Fatal(err)
		}
		if ended {
			return evs
		}
		runtime.Gosched()
	}
	e.t.Fatal("the clone job did not end")
	return nil
}

// waitOutput waits until job id's output holds s.
func (e *env) waitOutput(id, s string) {
	e.t.Helper()
	for range 200_000 {
		evs, _, _, err := e.CloneJobEvents(e.ctx, e.ann, id, 0)
		if err != nil {
			e.t.Fatal(err)
		}
		var out strings.Builder
		for _, ev := range evs {
			out.WriteString(ev.Output)
		}
		if strings.Contains(out.String(), s) {
			return
		}
		runtime.Gosched()
	}
	e.t.Fatalf("the clone's output never held %q", s)
}

func TestACloneJobClonesRegistersAndReportsItsPhases(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.dir("/home/ann/src")
	e.git.ScriptClone("https://example.com/me/app.git", fakes.CloneScript{Output: []string{"Cloning into 'app'...\r\n", "Receiving objects: 50%\rReceiving objects: 100%\r\n"}})
	id, err := e.CreateCloneJob(e.ctx, e.ann, hub.CreateCloneJobRequest{URL: "https://example.com/me/app.git", Dest: "/home/ann/src"})
	is.NoErr(err) // accepted
	evs := e.cloneEvents(id)
	var phases []hub.ClonePhase
	var out strings.Builder
	for _, ev := range evs {
		if ev.Phase != "" {
			phases = append(phases, ev.Phase)
		}
		out.WriteString(ev.Output)
	}
	is.Equal(phases, []hub.ClonePhase{hub.PhaseCloning, hub.PhaseRegistering}) // the phases, in order
	is.True(strings.Contains(out.String(), "Cloning into 'app'..."))           // git's output
	res := evs[len(evs)-1].Result
	is.True(res != nil)                                      // a result ends the events
	is.Equal(res.Status, hub.CloneSucceeded)                 // succeeded
	is.Equal(res.Target, "/home/ann/src/app")                // into the derived folder
	is.Equal(res.Running, false)                             // registered stopped
	is.Equal(e.pathOf(res.WorkspaceID), "/home/ann/src/app") // and registered there
	for i, ev := range evs {
		is.Equal(ev.ID, int64(i+1)) // numbered from 1, in order
	}
	later, _, _, err := e.CloneJobEvents(e.ctx, e.ann, id, 2)
	is.NoErr(err)
	is.Equal(later[0].ID, int64(3)) // Last-Event-ID replays what follows it

	other := e.user("bob")
	_, _, _, err = e.CloneJobEvents(e.ctx, other, id, 0)
	is.Equal(hub.KindOf(err), hub.NotFound) // another user's job does not exist for them
	e.clock.Advance(clone.Retention + time.Second)
	is.Equal(hub.KindOf(e.ProbeCloneJob(e.ctx, e.ann, id)), hub.NotFound) // nor once its retention ended
}

func TestAnAnswerReachesThePromptAndNeverTheOutput(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.dir("/home/ann/src")
	e.git.ScriptClone("https://example.com/me/private.git", fakes.CloneScript{
		Prompts: []string{"Password for 'https://example.com': ", "\r\nremote: wrong password {answer}\r\n"},
		Answers: []string{"hunter22", "hunter22"}})
	id, err := e.CreateCloneJob(e.ctx, e.ann, hub.CreateCloneJobRequest{URL: "https://example.com/me/private.git", Dest: "/home/ann/src", Start: true})
	is.NoErr(err)
	e.waitOutput(id, "Password for")
	is.NoErr(e.SendCloneJobInput(e.ctx, e.ann, id, "hunter22")) // answered
	e.waitOutput(id, "wrong password")
	is.NoErr(e.SendCloneJobInput(e.ctx, e.ann, id, "hunter22"))
	evs := e.cloneEvents(id)
	var out strings.Builder
	for _, ev := range evs {
		out.WriteString(ev.Output)
	}
	is.True(!strings.Contains(out.String(), "hunter22")) // the answer never shows in the output
	res := evs[len(evs)-1].Result
	is.Equal(res.Status, hub.CloneSucceeded) // cloned
	is.True(res.Running)                     // and started, as asked
	err = e.SendCloneJobInput(e.ctx, e.ann, id, "late")
	is.Equal(hub.KindOf(err), hub.Conflict) // input after the result: 409
}

func TestAFailedCloneSaysHowGitEnded(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.dir("/home/ann/src")
	e.git.ScriptClone("https://example.com/me/gone.git", fakes.CloneScript{Output: []string{"fatal: repository not found\r\n"}, Exit: 128})
	id, err := e.CreateCloneJob(e.ctx, e.ann, hub.CreateCloneJobRequest{URL: "https://example.com/me/gone.git", Dest: "/home/ann/src"})
	is.NoErr(err)
	evs := e.cloneEvents(id)
	res := evs[len(evs)-1].Result
	is.Equal(res.Status, hub.CloneFailed)                        // clone-failed
	is.Equal(res.Error, "git clone failed with exit status 128") // saying how, once
	is.Equal(res.Target, "/home/ann/src/gone")                   // naming the target
	is.Equal(res.WorkspaceID, "")                                // and registering nothing
}

func TestAStalledCloneIsCancelledOrTimesOut(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.dir("/home/ann/src")
	e.git.ScriptClone("https://example.com/me/slow.git", fakes.CloneScript{Stall: true})
	id, err := e.CreateCloneJob(e.ctx, e.ann, hub.CreateCloneJobRequest{URL: "https://example.com/me/slow.git", Dest: "/home/ann/src"})
	is.NoErr(err)
	answer, err := e.CancelCloneJob(e.ctx, e.ann, id)
	is.NoErr(err)
	is.Equal(answer, "cancelled") // this call stopped it
	evs := e.cloneEvents(id)
	is.Equal(evs[len(evs)-1].Result.Status, hub.CloneCancelled) // cancelled
	answer, err = e.CancelCloneJob(e.ctx, e.ann, id)
	is.NoErr(err)
	is.Equal(answer, "terminal") // a second cancel says it had ended
	_, err = e.CreateCloneJob(e.ctx, e.ann, hub.CreateCloneJobRequest{URL: "https://example.com/me/slow.git", Dest: "/home/ann/src", FolderName: "again"})
	is.NoErr(err) // the reservation of the first was released

	id2, err := e.CreateCloneJob(e.ctx, e.ann, hub.CreateCloneJobRequest{URL: "https://example.com/me/slow.git", Dest: "/home/ann/src", FolderName: "idle"})
	is.NoErr(err)
	e.clock.Advance(clone.Inactivity + time.Second) // nothing happens for 10 minutes
	evs = e.cloneEvents(id2)
	res := evs[len(evs)-1].Result
	is.Equal(res.Status, hub.CloneTimedOut)         // timed out
	is.Equal(res.Reason, hub.CloneReasonInactivity) // for inactivity
}

func TestACloneRequestIsRefusedBeforeAnythingRuns(t *testing.T) {
	e := newEnv(t)
	e.dir("/home/ann/src")
	e.dir("/home/ann/src/taken")
	e.register(e.repo("/home/ann/src/reg"))
	for _, tc := range []struct {
		name string
		req  hub.CreateCloneJobRequest
		kind hub.Kind
	}{
		{"a relative dest", hub.CreateCloneJobRequest{URL: "https://example.com/a.git", Dest: "src"}, hub.Invalid},
		{"a dest that does not exist", hub.CreateCloneJobRequest{URL: "https://example.com/a.git", Dest: "/home/ann/nope"}, hub.Invalid},
		{"a folder name of ..", hub.CreateCloneJobRequest{URL: "https://example.com/a.git", Dest: "/home/ann/src", FolderName: ".."}, hub.Invalid},
		{"a folder name with a slash", hub.CreateCloneJobRequest{URL: "https://example.com/a.git", Dest: "/home/ann/src", FolderName: "a/b"}, hub.Invalid},
		{"an ext:: URL", hub.CreateCloneJobRequest{URL: "ext::sh -c touch% /tmp/pwned", Dest: "/home/ann/src", FolderName: "x"}, hub.Invalid},
		{"embedded credentials", hub.CreateCloneJobRequest{URL: "https://u:p@example.com/a.git", Dest: "/home/ann/src"}, hub.Invalid},
		{"an unknown credential", hub.CreateCloneJobRequest{URL: "https://example.com/a.git", Dest: "/home/ann/src", CredentialID: "nope"}, hub.Invalid},
		{"an existing folder", hub.CreateCloneJobRequest{URL: "https://example.com/taken.git", Dest: "/home/ann/src"}, hub.Conflict},
		{"a registered folder", hub.CreateCloneJobRequest{URL: "https://example.com/reg.git", Dest: "/home/ann/src"}, hub.Conflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := e.CreateCloneJob(e.ctx, e.ann, tc.req)
			is.Equal(hub.KindOf(err), tc.kind)       // refused with its status
			is.Equal(e.git.Calls(fakes.GitClone), 0) // and git never ran
		})
	}
}

func TestAUserRunsAtMostABoundedNumberOfClonesAtOnce(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.dir("/home/ann/src")
	e.git.ScriptClone("https://example.com/me/slow.git", fakes.CloneScript{Stall: true})
	var ids []string
	for i := range clone.MaxRunningJobs {
		id, err := e.CreateCloneJob(e.ctx, e.ann, hub.CreateCloneJobRequest{URL: "https://example.com/me/slow.git", Dest: "/home/ann/src", FolderName: "s" + string(rune('a'+i))})
		is.NoErr(err) // within the bound
		ids = append(ids, id)
	}
	_, err := e.CreateCloneJob(e.ctx, e.ann, hub.CreateCloneJobRequest{URL: "https://example.com/me/slow.git", Dest: "/home/ann/src", FolderName: "over"})
	is.Equal(hub.KindOf(err), hub.Conflict)                                              // one more is refused
	is.Equal(hub.MessageOf(err), "too many clone jobs are running; wait for one to end") // saying why
	is.Equal(e.git.Calls(fakes.GitClone), clone.MaxRunningJobs)                          // and git did not run for it
	is.True(!e.isDir("/home/ann/src/over"))                                              // nor was anything made
	_, err = e.CancelCloneJob(e.ctx, e.ann, ids[0])
	is.NoErr(err)
	_, err = e.CreateCloneJob(e.ctx, e.ann, hub.CreateCloneJobRequest{URL: "https://example.com/me/slow.git", Dest: "/home/ann/src", FolderName: "over"})
	is.NoErr(err) // a finished job frees its place
}

// A registration whose journal could not be cleared still ends the job
// with a result (register-failed, saying recovery is required), so every
// watcher's stream ends; the earlier outcome carried the workspace id,
// which no register-failed result may, and the job never ended.
func TestACloneWhoseRegistrationNeedsRecoveryStillEndsWithAResult(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.dir("/home/ann/src")
	failCommit(e, 3) // the journal opens, the workspace registers, the journal cannot close
	id, err := e.CreateCloneJob(e.ctx, e.ann, hub.CreateCloneJobRequest{URL: "https://example.com/me/app.git", Dest: "/home/ann/src"})
	is.NoErr(err)
	evs := e.cloneEvents(id)
	res := evs[len(evs)-1].Result
	is.Equal(res.Status, hub.CloneRegisterFailed)                        // register-failed
	is.True(strings.Contains(res.Error, "restart the Hub to reconcile")) // saying what to do
	is.True(strings.Contains(res.Error, e.workspaces()[0].ID))           // and naming the workspace
}

// A cancel while the clone's workspace starts undoes its registration:
// the job holds its folder's reservation until it ends, and the rollback
// must not ask for it again.
func TestACloneCancelledWhileItStartsIsUnregistered(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.dir("/home/ann/src")
	e.git.ScriptClone("https://example.com/me/app.git", fakes.CloneScript{})
	release := e.backend.Hold() // the start waits
	defer release()
	id, err := e.CreateCloneJob(e.ctx, e.ann, hub.CreateCloneJobRequest{URL: "https://example.com/me/app.git", Dest: "/home/ann/src", Start: true})
	is.NoErr(err)
	for range 200_000 {
		evs, _, _, err := e.CloneJobEvents(e.ctx, e.ann, id, 0)
		is.NoErr(err)
		if slices.ContainsFunc(evs, func(ev hub.CloneEvent) bool { return ev.Phase == hub.PhaseStarting }) {
			break
		}
		runtime.Gosched()
	}
	done := make(chan string, 1)
	go func() {
		answer, err := e.CancelCloneJob(e.ctx, e.ann, id)
		if err != nil {
			answer = err.Error()
		}
		done <- answer
	}()
	runtime.Gosched()
	release()
	is.Equal(<-done, "cancelled") // the cancel returns once rolled back
	evs := e.cloneEvents(id)
	res := evs[len(evs)-1].Result
	is.Equal(res.Status, hub.CloneCancelled) // cancelled, not cleanup-failed
	for _, w := range e.workspaces() {
		is.True(w.Path != "/home/ann/src/app") // and nothing stays registered
	}
}
