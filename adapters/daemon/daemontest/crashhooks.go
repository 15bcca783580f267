package daemontest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// The driver's side of the hooks a family whose writes have consequences
// in time and outside the Hub sets (Family.Prepare, Stopped and Settle):
// the push family's messages, which the Hub journals before it sends
// them and sends from a journal that outlives kills.

// prepare runs the Prepare of every family that has one, in a directory
// of its own under dir, and returns the flags they need the daemons to
// run with and a release of them all.
func (r *crashRun) prepare(ctx context.Context, dir string) (args []string, release func(), err error) {
	var releases []func()
	release = func() {
		for _, f := range slices.Backward(releases) {
			f()
		}
	}
	for _, fam := range r.cfg.Families {
		if fam.Prepare == nil {
			continue
		}
		famDir := filepath.Join(dir, "family-"+fam.Name)
		if err := os.MkdirAll(famDir, 0o700); err != nil {
			release()
			return nil, nil, fmt.Errorf("crash load: %w", err)
		}
		a, rel, err := fam.Prepare(ctx, famDir)
		if err != nil {
			release()
			return nil, nil, fmt.Errorf("crash load: preparing %s: %w", fam.Name, err)
		}
		args = append(args, a...)
		if rel != nil {
			releases = append(releases, rel)
		}
	}
	return args, release, nil
}

// stopped hands the database a daemon left (db, a copy) to every writer
// whose family reads it. who names the daemon.
func (r *crashRun) stopped(ctx context.Context, who string, db *sql.DB) {
	for _, w := range r.writers {
		if w.Family.Stopped != nil {
			r.report(who, w, w.Family.Stopped(ctx, w, db))
		}
	}
}

// settle runs every writer's Settle, before the last stop.
func (r *crashRun) settle(ctx context.Context) {
	for _, w := range r.writers {
		if w.Family.Settle != nil {
			r.report("before the last stop", w, w.Family.Settle(ctx, w))
		}
	}
}

// report records every error err joins as a problem of w.
func (r *crashRun) report(who string, w *Writer, err error) {
	if err == nil {
		return
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		r.fig.problem("%s: %s-%d: %v", who, w.Family.Name, w.Index, e)
	}
}
