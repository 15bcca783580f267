package service

import (
	"context"
	"sync/atomic"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/live"
)

// What an operator's monitoring reads of the Hub: counters the service
// bumps where things happen (atomic adds, nothing else on any path), and
// Stats, a snapshot of them and of what the Hub holds, which an adapter
// (adapters/metrics) turns into Prometheus metrics at scrape time. The core
// knows nothing of Prometheus; no counter names a user, a workspace or a
// path, so every label an adapter makes of them is bounded.

// counters are the Hub's event counts since New. Every field only grows.
type counters struct {
	logins, loginFailures, loginRefusals atomic.Uint64

	sessionStarts, sessionStops, sessionCrashes atomic.Uint64

	journalsRecovered atomic.Uint64

	credentialUnlocks atomic.Uint64
	credentialUses    [len(usePurposes)][2]atomic.Uint64 // by purpose, then allowed (1) or not (0)

	cloneJobsStarted  atomic.Uint64
	cloneJobsFinished [len(CloneStatuses)]atomic.Uint64

	pushSent, pushFailed, pushDiscarded atomic.Uint64
}

// usePurposes are the purposes of a credential use the Hub counts; a use
// of another (none exists) is not counted.
var usePurposes = [...]hub.CredentialPurpose{hub.PurposeSSHLogin, hub.PurposeSignature, hub.PurposeToken}

// CloneStatuses are the results a clone job can end with, in the order
// Stats reports them.
var CloneStatuses = [...]hub.CloneStatus{hub.CloneSucceeded, hub.CloneFailed, hub.CloneRegisterFailed, hub.CloneStartFailed,
	hub.CloneCleanupFailed, hub.CloneCancelled, hub.CloneTimedOut}

// credentialUsed counts one use of a credential for purpose, allowed or
// not.
func (c *counters) credentialUsed(purpose hub.CredentialPurpose, allowed bool) {
	for i, p := range usePurposes {
		if p == purpose {
			c.credentialUses[i][count(allowed)].Add(1)
			return
		}
	}
}

// cloneFinished counts a clone job that ended with status.
func (c *counters) cloneFinished(status hub.CloneStatus) {
	for i, s := range CloneStatuses {
		if s == status {
			c.cloneJobsFinished[i].Add(1)
			return
		}
	}
}

func count(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Stats is a snapshot of the Hub for an operator's monitoring. Counts
// (…Total, and every uint64) grow from zero since the Hub was made; the
// other fields are what holds now.
type Stats struct {
	// Live is the live broker's: streams, subscriptions, upstreams and
	// the workspaces' activity.
	Live live.Stats
	// Workspaces is the registered workspaces, WorkspaceSessions the
	// workspace sessions running.
	Workspaces, WorkspaceSessions int
	// SessionStarts counts workspace sessions started; SessionStops
	// those the Hub ended (a stop, a forget, its own shutdown);
	// SessionCrashes those that ended on their own.
	SessionStarts, SessionStops, SessionCrashes uint64
	// JournalsRecovered counts the recovery journals Recover settled;
	// JournalsPending is the journals left pending that fence changes.
	JournalsRecovered uint64
	JournalsPending   int
	// Logins counts the logins that opened a device session,
	// LoginFailures those refused for a wrong name or password, and
	// LoginRefusals those the login limits refused before any password
	// was checked.
	Logins, LoginFailures, LoginRefusals uint64
	// CredentialUnlocks counts the keys unlocked with their passphrase
	// (hubUnlockCredential).
	CredentialUnlocks uint64
	// CredentialUses counts the uses of credentials by the sessions (a
	// signature is a use for hub.PurposeSignature), by purpose and
	// whether the use policy allowed them.
	CredentialUses []CredentialUseCount
	// CloneJobsStarted counts the clone jobs created; CloneJobsFinished
	// those that ended, by result (in CloneStatuses' order).
	CloneJobsStarted  uint64
	CloneJobsFinished []CloneJobCount
	// PushSent counts the push deliveries a push service accepted,
	// PushDiscarded those settled unsent (answered, seen, expired, the
	// device gone), PushFailed the attempts a push service did not accept
	// or that failed to reach it (a delivery may fail and later be sent).
	PushSent, PushFailed, PushDiscarded uint64
}

// CredentialUseCount is how many uses for Purpose were Allowed, or not.
type CredentialUseCount struct {
	Purpose hub.CredentialPurpose
	Allowed bool
	N       uint64
}

// CloneJobCount is how many clone jobs ended with Status.
type CloneJobCount struct {
	Status hub.CloneStatus
	N      uint64
}

// Stats returns a snapshot of the Hub. It reads memory only, except the
// first time, when the registry may be read from the store; an error
// reading it leaves Workspaces 0 and is returned with the rest filled.
func (h *Hub) Stats(ctx context.Context) (Stats, error) {
	c := &h.counters
	st := Stats{
		Live:              h.live.Stats(),
		WorkspaceSessions: len(h.runningSessions()),
		SessionStarts:     c.sessionStarts.Load(),
		SessionStops:      c.sessionStops.Load(),
		SessionCrashes:    c.sessionCrashes.Load(),
		JournalsRecovered: c.journalsRecovered.Load(),
		JournalsPending:   h.PendingJournals(),
		Logins:            c.logins.Load(),
		LoginFailures:     c.loginFailures.Load(),
		LoginRefusals:     c.loginRefusals.Load(),
		CredentialUnlocks: c.credentialUnlocks.Load(),
		CloneJobsStarted:  c.cloneJobsStarted.Load(),
		PushSent:          c.pushSent.Load(),
		PushFailed:        c.pushFailed.Load(),
		PushDiscarded:     c.pushDiscarded.Load(),
	}
	st.CredentialUses = make([]CredentialUseCount, 0, 2*len(usePurposes))
	for i, p := range usePurposes {
		for _, allowed := range []bool{true, false} {
			st.CredentialUses = append(st.CredentialUses, CredentialUseCount{Purpose: p, Allowed: allowed, N: c.credentialUses[i][count(allowed)].Load()})
		}
	}
	st.CloneJobsFinished = make([]CloneJobCount, len(CloneStatuses))
	for i, s := range CloneStatuses {
		st.CloneJobsFinished[i] = CloneJobCount{Status: s, N: c.cloneJobsFinished[i].Load()}
	}
	ws, err := h.registry(ctx)
	st.Workspaces = len(ws)
	return st, err
}
