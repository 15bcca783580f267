package hub

// WorkspaceActivity is what the activity topic says of a workspace, as one
// caller sees it. Working, Awaiting and Finished are false when not
// running.
type WorkspaceActivity struct {
	Running, Working, Awaiting, Finished bool
}

// Observation is what the Hub learned of a workspace's session: whether it
// runs and answers, and if so whether work is in flight (a turn or live
// background work) or something awaits the user (a permission or a
// question).
type Observation struct {
	Running, Working, Awaiting bool
}

func (o Observation) quiet() bool { return !o.Working && !o.Awaiting }

// activityMarks decides the per-caller `finished` flag. A workspace is
// finished for a user when the Hub saw it working, it went quiet, and the
// user has not acknowledged it since. Marks are ordered by one counter,
// never by a wall clock, so a clock step cannot reorder a finish and a
// view. It is not safe for concurrent use; the broker guards it.
type activityMarks struct {
	stamp      uint64
	observed   map[string]Observation       // last observation; absent until the first
	finishedAt map[string]uint64            // by workspace
	viewedAt   map[string]map[string]uint64 // by user, then workspace
}

func newActivityMarks() *activityMarks {
	return &activityMarks{observed: map[string]Observation{}, finishedAt: map[string]uint64{},
		viewedAt: map[string]map[string]uint64{}}
}

// observe records o for ws. Only working (and not awaiting) followed by
// quiet is a finish: unknown → quiet, awaiting → quiet and not running →
// quiet are not; any work or wait clears the finish. A session that
// stopped answering (not running) keeps the marks, so an unreachable
// child does not erase what the user has yet to see.
func (m *activityMarks) observe(ws string, o Observation) {
	prev, seen := m.observed[ws]
	m.observed[ws] = o
	switch {
	case !o.Running:
	case !o.quiet():
		delete(m.finishedAt, ws)
	case seen && prev.Running && prev.Working && !prev.Awaiting:
		m.stamp++
		m.finishedAt[ws] = m.stamp
	}
}

// stopped clears every mark of ws: its session stopped (or it was
// forgotten, and a later workspace may reuse nothing of it).
func (m *activityMarks) stopped(ws string) {
	delete(m.observed, ws)
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
	return ok && o.Running && o.quiet() && at > m.viewedAt[user][ws]
}

// of returns what user sees of ws.
func (m *activityMarks) of(user, ws string) WorkspaceActivity {
	o := m.observed[ws]
	if !o.Running {
		return WorkspaceActivity{}
	}
	return WorkspaceActivity{Running: true, Working: o.Working, Awaiting: o.Awaiting, Finished: m.finished(user, ws)}
}
