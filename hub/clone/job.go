package clone

import (
	"time"

	"github.com/wharfhub/wharf/hub"
)

// The limits of a job (the contract leaves them open; these are the
// earlier system's, research §11.2, and api/openapi.yaml states them).
const (
	// MaxOutputBytes bounds the output a job retains for replay (UTF-8
	// bytes): a reconnecting page gets the last screenfuls, and a clone
	// that prints megabytes of progress costs 64 KiB per job, not more.
	MaxOutputBytes = 64 << 10
	// MaxInputBytes bounds one answer to a prompt (413 beyond): a
	// password, a passphrase, a one-time code or "yes" is far shorter,
	// and the PTY's line discipline holds about 4 KiB of a line anyway.
	MaxInputBytes = 8192
	// Inactivity ends a cloning job that printed nothing and got no
	// input this long: a prompt nobody answers, a remote that stalls.
	Inactivity = 10 * time.Minute
	// Lifetime ends any job this long after it was created, output or
	// not: a remote that trickles bytes forever cannot hold a target
	// reserved and a process running without bound.
	Lifetime = 60 * time.Minute
	// Retention is how long a finished job's events stay replayable (a
	// phone that slept through the end still learns it); then 404.
	Retention = 5 * time.Minute
	// MaxRunningJobs bounds the jobs one Hub user has running at once:
	// each is a git process with its terminal and its folder reserved, and
	// a create answers at once, so without a bound a client looping on it
	// would start git processes without end. A person clones a few
	// repositories at a time.
	MaxRunningJobs = 4
)

// The refusals a job's operations answer.
var (
	ErrNotFound      = hub.Errorf(hub.NotFound, "clone job not found")
	ErrNoInput       = hub.Errorf(hub.Conflict, "clone job is not accepting input")
	ErrInputTooLarge = hub.Errorf(hub.TooLarge, "terminal response is too large")
	ErrCleanupFailed = hub.Errorf(hub.Internal, "clone job cleanup failed; review the job output and workspace state")
	ErrClosed        = hub.Errorf(hub.Internal, "clone job manager is closed")
	ErrTooManyJobs   = hub.Errorf(hub.Conflict, "too many clone jobs are running; wait for one to end")
)

// The answers of cancel (CloneJobCancelResult.status).
const (
	CancelCancelled = "cancelled" // this call stopped the job
	CancelTerminal  = "terminal"  // it had already finished (or another stop was under way)
)

// CancelAction is what a cancel asks of the caller.
type CancelAction int

// The actions.
const (
	// CancelStop: stop the job (terminate the process group, roll back a
	// registration), settle it with Finish, and answer CancelAnswer.
	CancelStop CancelAction = iota
	// CancelWait: a stop (another cancel, a time-out, shutdown) is under
	// way: wait for the result, then answer CancelTerminal.
	CancelWait
	// CancelDone: the job has its result: answer CancelTerminal at once.
	CancelDone
)

// Job is one clone job's state, moved only by the methods below, which
// the service calls under its lock with the Clock's now. The phases go
//
//	cloning ──git exit 0──▶ registering ──start requested──▶ starting
//	   │                        │                               │
//	   └────────────────────────┴───────────────────────────────┴──▶ result
//
// and a result is final. Each phase has its own failure (clone-failed,
// register-failed, start-failed); succeeded comes from registering
// without start, from starting with it; cleanup-failed, cancelled and
// timed-out from any phase. A stop (cancel, a time-out, Hub shutdown)
// wins over whatever the stopped work then reports, except a rollback
// that failed (cleanup-failed): the job ends as the stop says.
type Job struct {
	target       string
	start        bool
	phase        hub.ClonePhase
	createdAt    time.Time
	activeAt     time.Time
	stop, result *hub.CloneResult
	finishedAt   time.Time
}

// NewJob is a job that clones into target, created at now; start says
// the session is to be started after registration. It is cloning.
func NewJob(target string, start bool, now time.Time) *Job {
	return &Job{target: target, start: start, phase: hub.PhaseCloning, createdAt: now, activeAt: now}
}

// Phase is the job's phase (the last one, once it has a result).
func (j *Job) Phase() hub.ClonePhase { return j.phase }

// Result is the job's result, once it has one.
func (j *Job) Result() (hub.CloneResult, bool) {
	if j.result == nil {
		return hub.CloneResult{}, false
	}
	return *j.result, true
}

// Stopping reports a stop under way: the job no longer moves forward.
func (j *Job) Stopping() bool { return j.stop != nil && j.result == nil }

// Advance moves the job to its next phase: registering after cloning,
// starting after registering when start was requested. Anything else —
// a skipped or repeated phase, a move once stopping or finished — is an
// Internal error: the caller's bug, never a client's.
func (j *Job) Advance(to hub.ClonePhase) error {
	legal := j.result == nil && j.stop == nil &&
		(j.phase == hub.PhaseCloning && to == hub.PhaseRegistering ||
			j.phase == hub.PhaseRegistering && to == hub.PhaseStarting && j.start)
	if !legal {
		return hub.Errorf(hub.Internal, "clone job cannot move from %s to %s", j.phase, to)
	}
	j.phase = to
	return nil
}

// AcceptInput checks an answer to a prompt, in the earlier system's
// order: a job not cloning, stopping or finished refuses it (Conflict,
// ErrNoInput), then one over MaxInputBytes (TooLarge). An accepted
// answer counts as activity.
func (j *Job) AcceptInput(input string, now time.Time) error {
	if j.phase != hub.PhaseCloning || j.stop != nil || j.result != nil {
		return ErrNoInput
	}
	if len(input) > MaxInputBytes {
		return ErrInputTooLarge
	}
	j.Touch(now)
	return nil
}

// Touch records activity (output or accepted input) at now: it resets
// the inactivity time-out, which runs only while cloning.
func (j *Job) Touch(now time.Time) {
	if j.phase == hub.PhaseCloning && now.After(j.activeAt) {
		j.activeAt = now
	}
}

// Deadline is when the job next needs Expire: the inactivity time-out
// while cloning, else (and never later than) the lifetime's end. A
// finished job needs none (the zero time).
func (j *Job) Deadline() time.Time {
	if j.result != nil {
		return time.Time{}
	}
	d := j.createdAt.Add(Lifetime)
	if i := j.activeAt.Add(Inactivity); j.phase == hub.PhaseCloning && i.Before(d) {
		d = i
	}
	return d
}

// Expire checks the time-outs at now and reports whether the caller must
// stop the job: the lifetime first (it covers every phase, output or
// not), then inactivity while cloning. Once it reports true the job is
// stopping and will end timed-out with that reason.
func (j *Job) Expire(now time.Time) bool {
	if j.result != nil || j.stop != nil {
		return false
	}
	switch {
	case !now.Before(j.createdAt.Add(Lifetime)):
		j.stop = &hub.CloneResult{Status: hub.CloneTimedOut, Reason: hub.CloneReasonLifetime}
	case j.phase == hub.PhaseCloning && !now.Before(j.activeAt.Add(Inactivity)):
		j.stop = &hub.CloneResult{Status: hub.CloneTimedOut, Reason: hub.CloneReasonInactivity}
	default:
		return false
	}
	return true
}

// Cancel asks the job to stop (a cancel request, or Hub shutdown). Only
// the first stop of a running job is CancelStop; a repeat waits for the
// same end, and a finished job is CancelDone (cancel is idempotent).
func (j *Job) Cancel() CancelAction {
	switch {
	case j.result != nil:
		return CancelDone
	case j.stop != nil:
		return CancelWait
	}
	j.stop = &hub.CloneResult{Status: hub.CloneCancelled}
	return CancelStop
}

// Finish settles the job at now with the outcome of its work and answers
// the result: final, with the job's target. The outcome must be one its
// phase can have (clone-failed while cloning, register-failed while
// registering, start-failed while starting; succeeded after the last
// phase, with the workspace id and running as the phase says; an error
// on every failure; cleanup-failed anywhere); cancelled and timed-out are
// never an outcome, they come from Cancel and Expire. When a stop is
// under way the result is the stop's (the work was stopped, whatever it
// then reported; the zero outcome says the stop is done and nothing
// else happened), unless the outcome is cleanup-failed: a rollback that
// failed is what the owner must learn. A second Finish, or an outcome
// the phase cannot have, is an Internal error and changes nothing.
func (j *Job) Finish(outcome hub.CloneResult, now time.Time) (hub.CloneResult, error) {
	if j.result != nil {
		return hub.CloneResult{}, hub.Errorf(hub.Internal, "clone job already has a result")
	}
	if !j.fits(outcome) && !(j.stop != nil && outcome.Status == "") {
		return hub.CloneResult{}, hub.Errorf(hub.Internal, "clone job cannot end %s while %s", outcome.Status, j.phase)
	}
	res := outcome
	if j.stop != nil && outcome.Status != hub.CloneCleanupFailed {
		res = *j.stop
	}
	res.Target = j.target
	j.result, j.finishedAt = &res, now
	return res, nil
}

func (j *Job) fits(o hub.CloneResult) bool {
	failed := o.Error != "" && !o.Running && o.Reason == ""
	switch o.Status {
	case hub.CloneFailed:
		return j.phase == hub.PhaseCloning && failed && o.WorkspaceID == ""
	case hub.CloneRegisterFailed:
		return j.phase == hub.PhaseRegistering && failed && o.WorkspaceID == ""
	case hub.CloneStartFailed:
		return j.phase == hub.PhaseStarting && failed
	case hub.CloneCleanupFailed:
		return failed && o.WorkspaceID == ""
	case hub.CloneSucceeded:
		last := j.phase == hub.PhaseStarting || j.phase == hub.PhaseRegistering && !j.start
		return last && o.WorkspaceID != "" && o.Error == "" && o.Reason == "" && o.Running == (j.phase == hub.PhaseStarting)
	}
	return false
}

// CancelAnswer is what the cancel that got CancelStop answers once the
// job is settled with res: CancelCancelled, or ErrCleanupFailed (500)
// when the rollback failed.
func CancelAnswer(res hub.CloneResult) (string, error) {
	if res.Status == hub.CloneCleanupFailed {
		return "", ErrCleanupFailed
	}
	return CancelCancelled, nil
}

// Retained reports whether the job is still answered at now: until
// Retention after its result (then every operation answers 404, and its
// events are dropped).
func (j *Job) Retained(now time.Time) bool {
	return j.result == nil || now.Before(j.finishedAt.Add(Retention))
}
