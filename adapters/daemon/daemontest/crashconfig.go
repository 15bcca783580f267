package daemontest

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CrashConfig shapes a crash-load run. Binary and Dir are required; every
// other field has a working zero value.
type CrashConfig struct {
	// Binary is the wharf binary (Build, BuildBinary).
	Binary string
	// Dir is a private working directory: the state directory, the
	// daemon's home and every writer's folders go under it.
	Dir string
	// Seed drives every random choice (kill points, writers' operations);
	// zero picks one from the clock. Figures.Seed reports it.
	Seed uint64
	// Kills is the number of SIGKILLs; default 20.
	Kills int
	// Writers is the number of writers of each family; default 2.
	Writers int
	// MeanUptime is the mean time from a restart to the next kill: each
	// kill comes after a time drawn uniformly from [0, 2*MeanUptime), but
	// never before every writer has had a write acknowledged since the
	// restart; default 150 ms. A time, not a count of writes, so that slow
	// writes (a registration runs git) are cut as often as their length
	// makes them.
	MeanUptime time.Duration
	// RequestTimeout bounds each request; one that gets no answer while
	// no kill is under way is a problem (a hung daemon). Default 20 s.
	RequestTimeout time.Duration
	// Families are the kinds of writes; default DefaultFamilies() and
	// Extra.
	Families []*Family
	// Extra are families beyond the built-in ones that need the test's
	// help (HostWorkspaceFamily: an sshd); they join the default run and
	// can be named in Parse's families. A nil one (its program not
	// installed) is left out.
	Extra []*Family
	// Log receives every daemon's stderr (a Secrets log, a file); nil
	// keeps it only in memory, for the checks.
	Log io.Writer
	// Logf, when set, receives the seed and one line per kill.
	Logf func(format string, args ...any)
}

// Parse sets the fields named in spec, a comma-separated list of
// key=value with the keys kills, writers, seed, uptime (MeanUptime),
// timeout (RequestTimeout), the last two durations, families, names of
// DefaultFamilies joined by "+" (Families), and worktree-files, which
// runs the worktrees family as WorktreeFamilyOf(n):
// "kills=200,writers=3,seed=42,families=worktrees+folders". An empty spec
// changes nothing. It lets a test take a longer run, or one family's, from
// a flag or an environment variable.
func (c *CrashConfig) Parse(spec string) error {
	treeFiles := -1 // unset
	for _, kv := range strings.Split(spec, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("crash load: %q is not key=value", kv)
		}
		var err error
		switch k {
		case "kills":
			c.Kills, err = strconv.Atoi(v)
		case "writers":
			c.Writers, err = strconv.Atoi(v)
		case "uptime":
			c.MeanUptime, err = time.ParseDuration(v)
		case "seed":
			c.Seed, err = strconv.ParseUint(v, 10, 64)
		case "timeout":
			c.RequestTimeout, err = time.ParseDuration(v)
		case "families":
			c.Families, err = familiesNamed(strings.Split(v, "+"), c.extra())
		case "worktree-files":
			treeFiles, err = strconv.Atoi(v)
			if err == nil && treeFiles < 0 {
				err = errors.New("a negative count")
			}
		default:
			return fmt.Errorf("crash load: unknown key %q (kills, writers, seed, uptime, timeout, families, worktree-files)", k)
		}
		if err != nil {
			return fmt.Errorf("crash load: %s: %w", kv, err)
		}
	}
	if treeFiles >= 0 {
		if c.Families == nil {
			c.Families = append(DefaultFamilies(), c.extra()...)
		}
		i := slices.IndexFunc(c.Families, func(f *Family) bool { return f.Name == "worktrees" })
		if i < 0 {
			return errors.New("crash load: worktree-files without the worktrees family")
		}
		c.Families[i] = WorktreeFamilyOf(treeFiles)
	}
	return nil
}

// extra is Extra without its nil families.
func (c *CrashConfig) extra() []*Family {
	var fams []*Family
	for _, f := range c.Extra {
		if f != nil {
			fams = append(fams, f)
		}
	}
	return fams
}

// familiesNamed returns the families of these names, built-in or extra,
// in order.
func familiesNamed(names []string, extra []*Family) ([]*Family, error) {
	all := append(DefaultFamilies(), extra...)
	var fams []*Family
	for _, name := range names {
		i := slices.IndexFunc(all, func(f *Family) bool { return f.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("no family is named %q", name)
		}
		fams = append(fams, all[i])
	}
	return fams, nil
}

func (c *CrashConfig) defaults() {
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	if c.Kills <= 0 {
		c.Kills = 20
	}
	if c.Writers <= 0 {
		c.Writers = 2
	}
	if c.MeanUptime <= 0 {
		c.MeanUptime = 150 * time.Millisecond
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 20 * time.Second
	}
	if c.Families == nil {
		c.Families = append(DefaultFamilies(), c.extra()...)
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
}
