package service

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/clone"
)

// A clone job's run: git's terminal output read, normalized, scrubbed and
// logged; its time-outs armed through the Clock; then, once git has
// succeeded, the registration (the journaled onboarding path, with the
// job's display name, retained assignments and signing) and the
// requested start; the result; and the job dropped once its retention
// ends. A stop (cancel, time-out, Hub shutdown) kills git's process group
// and rolls a registration back.

// readChunk is how much of git's terminal output is read at a time.
const readChunk = 32 << 10

// runClone runs job j to its result.
func (h *Hub) runClone(j *cloneJob) {
	defer h.watchers.Done()
	ctx := context.Background()
	var norm = clone.NewNormalizer()
	buf := make([]byte, readChunk)
	for {
		n, err := j.run.Read(buf)
		if n > 0 {
			h.cloneOutput(j, norm.Write(nil, buf[:n]))
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				h.log.LogAttrs(ctx, slog.LevelWarn, "a clone's terminal failed", slog.String("job", j.id), slog.Any("err", err))
			}
			break
		}
	}
	h.cloneOutput(j, norm.Flush(nil))
	h.cloneFlush(j)
	werr := j.run.Wait()

	outcome := h.afterClone(ctx, j, werr)
	j.mu.Lock()
	res, err := j.job.Finish(outcome, h.clock.Now())
	if err != nil {
		// An outcome the job refuses is this file's bug; the job must
		// still end, or its watchers would wait for ever.
		h.log.LogAttrs(ctx, slog.LevelError, "a clone job's outcome was refused", slog.String("job", j.id), slog.Any("err", err))
		if res, err = j.job.Finish(hub.CloneResult{Status: hub.CloneCleanupFailed, Error: "the clone job failed inside the Hub"}, h.clock.Now()); err != nil {
			res, _ = j.job.Result()
		}
	}
	h.counters.cloneFinished(res.Status)
	j.append(hub.CloneEvent{Result: &res, At: h.clock.Now()})
	if j.timer != nil {
		j.timer.Stop()
	}
	j.mu.Unlock()
	j.release()
	h.clones.give(j.owner)
	close(j.ended)
	h.clock.AfterFunc(clone.Retention, func() { h.dropClone(j) })
}

// afterClone registers and starts what git cloned, and answers the
// job's outcome (the zero outcome when a stop ended it and was undone).
func (h *Hub) afterClone(ctx context.Context, j *cloneJob, werr error) hub.CloneResult {
	j.mu.Lock()
	stopping := j.job.Stopping()
	j.mu.Unlock()
	if stopping {
		return hub.CloneResult{}
	}
	if werr != nil {
		return hub.CloneResult{Status: hub.CloneFailed, Error: hub.MessageOf(werr)} // says "git clone …" itself
	}
	if !h.advanceClone(j, hub.PhaseRegistering) {
		return hub.CloneResult{}
	}
	w, recovery, err := h.registerClone(ctx, j)
	switch {
	case err != nil:
		return hub.CloneResult{Status: hub.CloneRegisterFailed, Error: hub.MessageOf(err)}
	case recovery != "":
		// A register-failed result names no workspace (the contract's
		// variant has none): its error does.
		return hub.CloneResult{Status: hub.CloneRegisterFailed, Error: recovery + " (workspace " + w.ID + ")"}
	}
	if h.cloneStopped(j) {
		return h.undoClone(ctx, j, w.ID)
	}
	if !j.checked.Start {
		return hub.CloneResult{Status: hub.CloneSucceeded, WorkspaceID: w.ID}
	}
	if !h.advanceClone(j, hub.PhaseStarting) {
		return h.undoClone(ctx, j, w.ID)
	}
	if _, err := h.StartWorkspace(ctx, w.ID); err != nil {
		return hub.CloneResult{Status: hub.CloneStartFailed, Error: hub.MessageOf(err), WorkspaceID: w.ID}
	}
	if h.cloneStopped(j) {
		return h.undoClone(ctx, j, w.ID)
	}
	return hub.CloneResult{Status: hub.CloneSucceeded, WorkspaceID: w.ID, Running: true}
}

// registerClone registers the cloned folder through the onboarding path,
// holding the job's reservation of it.
func (h *Hub) registerClone(ctx context.Context, j *cloneJob) (hub.Workspace, string, error) {
	h.onboardMu.Lock()
	defer h.onboardMu.Unlock()
	if err := h.fence(fenceRegister); err != nil {
		return hub.Workspace{}, "", err
	}
	return h.onboard(ctx, j.pl, "clone", j.target, j.checked.DisplayName, false, false,
		selections{authentication: j.checked.Retained, signing: j.checked.Signing})
}

// undoClone rolls back the registration of a job stopped while it
// registered or started: the session stopped and the workspace forgotten
// (its folder is kept, and the result names it).
func (h *Hub) undoClone(ctx context.Context, j *cloneJob, id string) hub.CloneResult {
	if _, err := h.StopWorkspace(ctx, id); err == nil {
		// The job holds the folder's reservation until it ends.
		if _, err := h.forgetWorkspace(ctx, id, false); err == nil {
			return hub.CloneResult{}
		}
	}
	return hub.CloneResult{Status: hub.CloneCleanupFailed, Error: "the cancelled clone's registration could not be rolled back (workspace " + id + ")"}
}

// advanceClone moves j to phase and logs it; false when a stop came
// first.
func (h *Hub) advanceClone(j *cloneJob, phase hub.ClonePhase) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.job.Stopping() || j.job.Advance(phase) != nil {
		return false
	}
	j.append(hub.CloneEvent{Phase: phase, At: h.clock.Now()})
	return true
}

func (h *Hub) cloneStopped(j *cloneJob) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.job.Stopping()
}

// cloneOutput scrubs and logs text, git's normalized output, as activity.
func (h *Hub) cloneOutput(j *cloneJob, text []byte) {
	if len(text) == 0 {
		return
	}
	j.mu.Lock()
	out := j.scrub.Write(nil, text)
	if len(out) > 0 {
		j.job.Touch(h.clock.Now())
		j.append(hub.CloneEvent{Output: string(out), At: h.clock.Now()})
	}
	j.mu.Unlock()
	h.armClone(j)
}

// cloneFlush ends the scrubbed stream: what it held back is dropped.
func (h *Hub) cloneFlush(j *cloneJob) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if out := j.scrub.Flush(nil); len(out) > 0 {
		j.append(hub.CloneEvent{Output: string(out), At: h.clock.Now()})
	}
}

// armClone sets the job's timer to its next deadline: when it passes,
// Expire says whether the job must stop, and git is killed.
func (h *Hub) armClone(j *cloneJob) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.timer != nil {
		j.timer.Stop()
		j.timer = nil
	}
	at := j.job.Deadline()
	if at.IsZero() {
		return
	}
	j.timer = h.clock.AfterFunc(at.Sub(h.clock.Now()), func() { h.expireClone(j) })
}

func (h *Hub) expireClone(j *cloneJob) {
	j.mu.Lock()
	stop := j.job.Expire(h.clock.Now())
	j.mu.Unlock()
	if !stop {
		h.armClone(j) // activity moved the deadline
		return
	}
	if err := j.run.Kill(); err != nil {
		h.log.Warn("a timed-out clone could not be killed", "job", j.id, "err", err)
	}
}

// dropClone forgets a job whose retention has ended.
func (h *Hub) dropClone(j *cloneJob) {
	h.clones.mu.Lock()
	defer h.clones.mu.Unlock()
	if h.clones.by[j.id] == j {
		delete(h.clones.by, j.id)
	}
}

// closeClones cancels every running job and waits for them (Hub Close).
func (h *Hub) closeClones() {
	h.clones.mu.Lock()
	h.clones.closed = true
	var running []*cloneJob
	for _, j := range h.clones.by {
		running = append(running, j)
	}
	h.clones.mu.Unlock()
	for _, j := range running {
		j.mu.Lock()
		action := j.job.Cancel()
		j.mu.Unlock()
		if action == clone.CancelStop {
			_ = j.run.Kill()
		}
	}
	deadline := time.After(10 * time.Second) // the runner bounds its own kill; this bounds a stuck one
	for _, j := range running {
		select {
		case <-j.ended:
		case <-deadline:
			return
		}
	}
}
