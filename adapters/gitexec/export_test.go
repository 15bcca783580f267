package gitexec

// Runs reports how many git processes r has started.
func Runs(r *Runner) int64 { return r.runs.Load() }
