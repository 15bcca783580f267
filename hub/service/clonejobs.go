package service

import (
	"context"
	"errors"
	"io/fs"
	"sync"

	"github.com/google/uuid"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/clone"
)

// Clone jobs: clone a repository into a new folder with a Hub-held
// credential, register it as a workspace and, when asked, start it, while
// the owner follows git's output and answers its prompts from any of
// their devices. The rules are hub/clone's (the request, the job's state
// machine, the event log, the output normaliser, the scrubber); git runs
// in a terminal of its own through the GitRunner (Clone), lent only the
// selected credential, for the URL's host. A job belongs to the Hub user
// who created it: every device of that user sees it, nobody else's does
// (404). This file creates jobs and answers their operations;
// clonerun.go runs them.

// cloneJobs are the jobs the Hub holds: running, and finished ones until
// their retention ends.
type cloneJobs struct {
	mu      sync.Mutex
	by      map[string]*cloneJob
	running map[string]int // jobs without a result, by owner
	closed  bool
}

// cloneJob is one job. Its fields after the first block are guarded by
// mu.
type cloneJob struct {
	id, owner string
	pl        place // where git runs and the workspace lives
	target    string
	checked   clone.Checked
	run       hub.CloneRun
	release   func()        // the target's reservation
	ended     chan struct{} // closed once the job has its result

	mu      sync.Mutex
	job     *clone.Job
	log     clone.Log
	scrub   clone.Scrubber
	changed chan struct{} // closed and replaced at each event
	timer   hub.Timer     // the next Deadline
}

// CreateCloneJob checks req, reserves the clone's folder and starts git
// (hubCreateCloneJob) on the machine req.Backend names; the job runs on
// and the answer is its id. Nothing runs and nothing is reserved when the
// request is refused: a malformed field or an unknown backend (400), an
// unknown credential (400), a disabled or locked one, a folder that
// exists, is registered or is reserved (409), a host that cannot be
// reached (503).
func (h *Hub) CreateCloneJob(ctx context.Context, caller hub.DeviceSession, req hub.CreateCloneJobRequest) (string, error) {
	checked, err := clone.CheckRequest(req)
	if err != nil {
		return "", err
	}
	pl, err := h.placeOf(ctx, req.Backend)
	if err != nil {
		return "", err
	}
	dest, err := pl.directDir(checked.Dest, "dest")
	if errors.Is(err, fs.ErrNotExist) || hub.KindOf(err) == hub.NotFound {
		return "", hub.Errorf(hub.Invalid, "an existing destination directory is required")
	} else if err != nil {
		return "", err
	}
	target := checked.Target(dest)
	creds, err := h.cloneCredentials(ctx, checked)
	if err != nil {
		return "", err
	}
	if err := h.fence(fenceRegister); err != nil {
		return "", err
	}
	if w, ok, err := h.registeredAt(ctx, pl.name, target); err != nil {
		return "", err
	} else if ok {
		return "", hub.Errorf(hub.Conflict, "workspace is already registered: %s", w.Path)
	}
	if pl.exists(target) {
		return "", hub.Errorf(hub.Conflict, "target already exists: %s", target)
	}
	release, err := h.reserved.reserve(pl.key(target))
	if err != nil {
		return "", hub.Errorf(hub.Conflict, "clone target is already reserved: %s", target)
	}
	if err := h.clones.take(caller.User); err != nil {
		release()
		return "", err
	}
	run, err := pl.git.Clone(context.WithoutCancel(ctx), hub.CloneRequest{URL: checked.Source.URL, Target: target, Credentials: creds})
	if err != nil {
		release()
		h.clones.give(caller.User)
		if k := hub.KindOf(err); !pl.local() && (k == hub.Unavailable || k == hub.Conflict) {
			return "", err // the host unreachable, or the folder made there meanwhile: its own words
		}
		return "", hub.Wrap(hub.Internal, err, "git clone could not be started")
	}
	j := &cloneJob{id: uuid.NewString(), owner: caller.User, pl: pl, target: target, checked: checked, run: run,
		release: release, ended: make(chan struct{}), job: clone.NewJob(target, checked.Start, h.clock.Now()),
		changed: make(chan struct{})}
	j.append(hub.CloneEvent{Phase: hub.PhaseCloning, At: h.clock.Now()})
	h.clones.mu.Lock()
	if h.clones.by == nil {
		h.clones.by = map[string]*cloneJob{}
	}
	h.clones.by[j.id] = j
	h.clones.mu.Unlock()
	h.armClone(j)
	h.counters.cloneJobsStarted.Add(1)
	h.watchers.Add(1)
	go h.runClone(j)
	return j.id, nil
}

// take claims one of user's running-job slots (clone.MaxRunningJobs),
// refusing once the Hub is closing; give returns it when the job ends.
func (c *cloneJobs) take(user string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return hub.Errorf(hub.Unavailable, "the Hub is shutting down")
	case c.running[user] >= clone.MaxRunningJobs:
		return clone.ErrTooManyJobs
	}
	if c.running == nil {
		c.running = map[string]int{}
	}
	c.running[user]++
	return nil
}

func (c *cloneJobs) give(user string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running[user]--; c.running[user] <= 0 {
		delete(c.running, user)
	}
}

// cloneCredentials checks the clone's credential and the selections its
// workspace will keep, and answers what the clone is lent: the selected
// credential alone, for the URL's host.
func (h *Hub) cloneCredentials(ctx context.Context, checked clone.Checked) (hub.SessionCredentials, error) {
	cat, _, _, err := h.catalog(ctx)
	if err != nil {
		return hub.SessionCredentials{}, hub.Wrap(hub.Internal, err, "credentials could not be read")
	}
	if len(checked.Retained) > 0 || checked.Signing != "" {
		if _, err := cat.Onboard("", checked.Retained, checked.Signing); err != nil {
			return hub.SessionCredentials{}, err
		}
	}
	if checked.CredentialID == "" {
		return hub.SessionCredentials{}, nil
	}
	c, ok := cat.Credential(checked.CredentialID)
	if !ok {
		return hub.SessionCredentials{}, clone.UnknownCredential(checked.CredentialID)
	}
	if err := clone.CredentialFits(c, h.vault.Unlocked(c.ID), checked.Source); err != nil {
		return hub.SessionCredentials{}, err
	}
	host := checked.Source.Host
	sc := hub.SessionCredentials{Broker: &cloneBroker{h: h, id: c.ID, host: host}}
	switch c.Type {
	case hub.CredentialSSH:
		sc.Logins = []hub.SessionLogin{{Host: host, CredentialID: c.ID, Type: c.Type, PublicKey: c.PublicKey}}
	case hub.CredentialToken:
		sc.Logins = []hub.SessionLogin{{Host: host, CredentialID: c.ID, Type: c.Type, HTTPS: true}}
	}
	sc.Tools = map[hub.CredentialToolName]string{}
	for t, p := range h.toolPaths.refresh(ctx, h, []hub.CredentialToolName{hub.ToolSSH, hub.ToolGit}) {
		if p != "" {
			sc.Tools[t] = p
		}
	}
	return sc, nil
}

// cloneJob returns caller's job id, NotFound ("clone job not found") when
// there is none, it is another user's, or its retention has ended.
func (h *Hub) cloneJob(caller hub.DeviceSession, id string) (*cloneJob, error) {
	h.clones.mu.Lock()
	j := h.clones.by[id]
	h.clones.mu.Unlock()
	if j == nil || j.owner != caller.User {
		return nil, clone.ErrNotFound
	}
	j.mu.Lock()
	retained := j.job.Retained(h.clock.Now())
	j.mu.Unlock()
	if !retained {
		return nil, clone.ErrNotFound
	}
	return j, nil
}

// ProbeCloneJob answers whether caller's job id exists
// (hubProbeCloneJobEvents).
func (h *Hub) ProbeCloneJob(ctx context.Context, caller hub.DeviceSession, id string) error {
	_, err := h.cloneJob(caller, id)
	return err
}

// CloneJobEvents answers caller's job id's retained events after the id
// last (Last-Event-ID), whether the last of them is the result, and a
// channel closed at the next event, for a stream that waits for more.
func (h *Hub) CloneJobEvents(ctx context.Context, caller hub.DeviceSession, id string, last int64) ([]hub.CloneEvent, bool, <-chan struct{}, error) {
	j, err := h.cloneJob(caller, id)
	if err != nil {
		return nil, false, nil, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.log.After(last), j.log.Ended(), j.changed, nil
}

// SendCloneJobInput types input and a newline into the job's terminal,
// as an answer to git's prompt (hubSendCloneJobInput): 409 when the job takes no input,
// 413 past the bound. Input of 4 bytes or more is scrubbed from all later
// output.
func (h *Hub) SendCloneJobInput(ctx context.Context, caller hub.DeviceSession, id, input string) error {
	j, err := h.cloneJob(caller, id)
	if err != nil {
		return err
	}
	j.mu.Lock()
	err = j.job.AcceptInput(input, h.clock.Now())
	if err == nil {
		j.scrub.Add(input)
	}
	j.mu.Unlock()
	if err != nil {
		return err
	}
	h.armClone(j)
	if _, err := j.run.Write([]byte(input + "\n")); err != nil {
		return hub.Errorf(hub.Conflict, "clone job is not accepting input")
	}
	return nil
}

// CancelCloneJob stops caller's job id (hubCancelCloneJob) and answers
// once it is settled: "cancelled" when this call stopped it, "terminal"
// when it had already ended (or another stop was under way).
func (h *Hub) CancelCloneJob(ctx context.Context, caller hub.DeviceSession, id string) (string, error) {
	j, err := h.cloneJob(caller, id)
	if err != nil {
		return "", err
	}
	j.mu.Lock()
	action := j.job.Cancel()
	j.mu.Unlock()
	if action == clone.CancelDone {
		return clone.CancelTerminal, nil
	}
	if action == clone.CancelStop {
		if err := j.run.Kill(); err != nil {
			h.log.Warn("a clone could not be killed", "job", j.id, "err", err)
		}
	}
	select {
	case <-j.ended:
	case <-ctx.Done():
		return "", hub.Wrap(hub.Unavailable, ctx.Err(), "request cancelled")
	}
	if action != clone.CancelStop {
		return clone.CancelTerminal, nil
	}
	j.mu.Lock()
	res, _ := j.job.Result()
	j.mu.Unlock()
	return clone.CancelAnswer(res)
}

// append adds e to the job's log and wakes its watchers; j.mu is held
// or the job is not yet shared.
func (j *cloneJob) append(e hub.CloneEvent) {
	if _, err := j.log.Append(e); err != nil {
		return // the caller's bug: the log refused it and changed nothing
	}
	close(j.changed)
	j.changed = make(chan struct{})
}
