package gitexec

import "github.com/wharfhub/wharf/hub"

// Runs reports how many git processes r has started.
func Runs(r *Runner) int64 { return r.runs.Load() }

// ClonePid is the pid of a clone's git, its process group's id.
func ClonePid(run hub.CloneRun) int { return run.(*cloneRun).Pid() }
