package gitcmd

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// With bounds one command of RunInWith otherwise than the Runner's
// Options: the commands whose work grows with the repository (a checkout,
// the status of a large tree, the removal of a tree) need more time or
// output than the Runner's inspections, and a command that reaches a
// remote runs with the credentials it is lent alone.
type With struct {
	// Timeout replaces Options.Timeout when positive.
	Timeout time.Duration
	// MaxStdout replaces Options.MaxStdout when positive.
	MaxStdout int
	// Lent, when set, runs git as a clone runs (terminal.go), with
	// prompts off: no system or global config, no HOME, NETRC, ambient
	// SSH agent or askpass program of the Runner's environment, and only
	// the credentials Lent projects.
	Lent *Lent
}

// Lent is what a command that reaches a remote is lent: the projection
// of its credentials (adapters/internal/credenv).
type Lent struct {
	// Home is git's HOME: an existing, empty, private folder (git and
	// libcurl read $HOME/.netrc).
	Home string
	// Env holds the projection's variables; of GIT_* variables only
	// lentVars, and never HOME.
	Env []string
	// Config holds the projection's settings (its credential helper):
	// they follow cloneConfig and Options.Config, and precede
	// fixedConfig.
	Config []Setting
}

// lentVars are the GIT_* variables Lent.Env may set: a clone's, and the
// askpass program git runs when a remote asks for credentials no helper
// gave (the caller's own, which answers nothing).
var lentVars = map[string]bool{
	"GIT_SSH_COMMAND": true, "GIT_SSH_VARIANT": true, "GIT_CONFIG_NOSYSTEM": true, "GIT_CONFIG_GLOBAL": true,
	"GIT_ASKPASS": true,
}

// limits returns the bounds and environment of a command run with w.
func (r *Runner) limits(w With) (limits, error) {
	lim := limits{timeout: cmp.Or(max(w.Timeout, 0), r.opts.Timeout), maxStdout: cmp.Or(max(w.MaxStdout, 0), r.opts.MaxStdout), env: r.env}
	if w.Lent == nil {
		return lim, nil
	}
	l := w.Lent
	if !filepath.IsAbs(l.Home) {
		return limits{}, fmt.Errorf("%w: a lent command needs an absolute HOME", ErrRefused)
	}
	for _, kv := range l.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "HOME" || strings.HasPrefix(k, "GIT_") && !lentVars[k] || strings.IndexByte(kv, 0) >= 0 {
			return limits{}, fmt.Errorf("%w: a lent command's variables may not set %s", ErrRefused, k)
		}
	}
	env, err := r.lentEnv(l.Home, l.Env, l.Config, false)
	if err != nil {
		return limits{}, err
	}
	lim.env = env
	return lim, nil
}
