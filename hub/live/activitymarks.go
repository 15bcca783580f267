package live

import "github.com/wharfhub/wharf/hub"

// activityMarks decides the per-caller `finished` flag, by the contract's
// rule: a workspace is finished for a user when the Hub observed it
// working, it has gone quiet (not working, nothing awaiting), and the user
// has not acknowledged it since. What happened in between does not
// matter: a turn that asked for a permission is working and awaiting, and
// once the answer ends it the workspace has worked and gone quiet like any
// other. The mark is cleared by the user's acknowledgement (for that user),
// by the session stopping and by work starting again; while something
// awaits an answer it is not shown (the workspace is not quiet) but kept.
// Marks are ordered by one counter, never by a wall clock, so a clock step
// cannot reorder a finish and a view. It is not safe for concurrent use;
// the broker guards it.
type activityMarks struct {
	stamp      uint64
	observed   map[string]hub.Observation   // last observation; absent until the first
	worked     map[string]bool              // observed working since it was last quiet
	finishedAt map[string]uint64            // by workspace
	viewedAt   map[string]map[string]uint64 // by user, then workspace
	finishes   uint64                       // finishes observed, for Stats
}

func newActivityMarks() *activityMarks {
	return &activityMarks{observed: map[string]hub.Observation{}, worked: map[string]bool{},
		finishedAt: map[string]uint64{}, viewedAt: map[string]map[string]uint64{}}
}

// observe records o for ws. Working clears the finish and starts a spell
// of work; quiet after a spell of work is a finish; awaiting alone
// neither starts nor ends one. A session that stopped answering (not
// running) changes no mark: an unreachable child neither erases what the
// user has yet to see nor the work the Hub saw it doing.
func (m *activityMarks) observe(ws string, o hub.Observation) {
	m.observed[ws] = o
	switch {
	case !o.Running:
	case o.Working:
		m.worked[ws] = true
		delete(m.finishedAt, ws)
	case o.Awaiting:
	case m.worked[ws]:
		delete(m.worked, ws)
		m.stamp++
		m.finishedAt[ws] = m.stamp
		m.finishes++
	}
}

// stopped clears every mark of ws: its session stopped (or it was
// forgotten, and a later workspace may reuse nothing of it).
func (m *activityMarks) stopped(ws string) {
	delete(m.observed, ws)
	delete(m.worked, ws)
	delete(m.finishedAt, ws)
	for _, views := range m.viewedAt {
		delete(views, ws)
	}
}

// acknowledge records that user viewed ws, and reports whether that
// changed what user sees: only an unseen finish is acknowledged.
func (m *activityMarks) acknowledge(user, ws string) bool {
	if !m.finished(user, ws) {
		return false
	}
	m.stamp++
	if m.viewedAt[user] == nil {
		m.viewedAt[user] = map[string]uint64{}
	}
	m.viewedAt[user][ws] = m.stamp
	return true
}

func (m *activityMarks) finished(user, ws string) bool {
	o := m.observed[ws]
	at, ok := m.finishedAt[ws]
	return ok && o.Running && o.Quiet() && at > m.viewedAt[user][ws]
}

// of returns what user sees of ws.
func (m *activityMarks) of(user, ws string) hub.WorkspaceActivity {
	o := m.observed[ws]
	if !o.Running {
		return hub.WorkspaceActivity{}
	}
	return hub.WorkspaceActivity{Running: true, Working: o.Working, Awaiting: o.Awaiting, Finished: m.finished(user, ws)}
}
