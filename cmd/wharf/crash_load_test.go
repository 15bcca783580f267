package main

import (
	"context"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
)

// crashLoadSpec lengthens or reseeds TestCrashLoad: a comma-separated
// key=value list (kills, writers, seed, uptime, timeout, families; see
// daemontest.CrashConfig.Parse), from the flag or, when the flag is empty,
// from $WHARF_CRASH_LOAD. For example:
//
//	go test ./cmd/wharf -run TestCrashLoad -crash-load kills=300,writers=3
//	WHARF_CRASH_LOAD=seed=42 go test ./cmd/wharf -run TestCrashLoad
//	go test ./cmd/wharf -run TestCrashLoad -crash-load families=worktrees+clones
//	go test ./cmd/wharf -run TestCrashLoad -crash-load families=host-workspaces
var crashLoadSpec = flag.String("crash-load", "", "TestCrashLoad's shape: kills=N,writers=N,seed=N,uptime=D,timeout=D,families=A+B")

// crashLoadBound bounds the default run (20 kills); a longer run given by
// -crash-load gets a bound that grows with its kills.
const crashLoadBound = 4 * time.Minute

// TestCrashLoad runs the real `wharf serve` binary under the load of
// every built-in family (folders, workspaces, display names, personal
// state, credentials, clone jobs, worktrees, push deliveries) and kills it
// with SIGKILL at random points at least 20 times: after every restart on
// the same state directory, every acknowledged write must be there and no
// recovery journal pending, and every push delivery a daemon journaled
// reaches the push service, once but for a send a kill cut. What it
// asserts is about acknowledged and journaled data only, so the random
// kill points never make it flaky; the seed is logged to replay a run's
// choices.
func TestCrashLoad(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	cfg := daemontest.CrashConfig{Binary: daemontest.Build(t), Dir: t.TempDir(), Kills: 20, Writers: 2, Logf: t.Logf}
	spec := *crashLoadSpec
	if spec == "" {
		spec = os.Getenv("WHARF_CRASH_LOAD")
	}
	// The workspaces of another machine (a loopback sshd) join the
	// built-in families.
	cfg.Extra = []*daemontest.Family{daemontest.HostWorkspaceFamily(t)}
	is.NoErr(cfg.Parse(spec)) // the run's shape
	bound := crashLoadBound
	if cfg.Kills > 20 {
		bound = time.Duration(cfg.Kills) * crashLoadBound / 20
	}
	ctx, cancel := context.WithTimeout(t.Context(), bound)
	defer cancel()

	fig, err := daemontest.CrashLoad(ctx, cfg)
	t.Logf("crash load figures:\n%s", fig)
	is.NoErr(err)                  // the run went to its end
	is.True(fig.Kills >= 20)       // at least 20 kills
	is.Equal(fig.Lost, 0)          // no acknowledged write lost or undone
	is.Equal(fig.Unexpected, 0)    // nothing that no write explains
	is.Equal(fig.Pending, 0)       // every journal recovered
	is.Equal(fig.Refused, 0)       // no write refused (a pending journal would fence them)
	is.Equal(len(fig.Problems), 0) // nothing else found
	families := cfg.Families
	if families == nil { // the default run's
		families = daemontest.DefaultFamilies()
		if cfg.Extra[0] != nil {
			families = append(families, cfg.Extra[0])
		}
	}
	ran := map[string]bool{}
	for _, fam := range families {
		ran[fam.Name] = true
	}
	for _, fam := range []string{"folders", "workspaces", "display-names", "personal-state", "worktrees", "push", "host-workspaces"} {
		if ran[fam] {
			is.True(fig.AckedByFamily()[fam] >= fig.Kills*cfg.Writers) // every writer of every family wrote before every kill
		}
	}
	if ran["push"] {
		is.True(fig.Notes["push: deliveries a daemon left journaled unsent that a later one sent"] > 0) // the push checks had something to check
	}
}
