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

func (o Observation) Quiet() bool { return !o.Working && !o.Awaiting }
