package daemontest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Figures are what a crash-load run did and found. A sound daemon shows
// Lost, Unexpected, Pending, Refused and len(Problems) all zero.
type Figures struct {
	Seed    uint64
	Kills   int
	Writers int // writer goroutines, all families together
	// Acked counts the acknowledged (2xx) writes by "<family>/<op>".
	Acked map[string]int
	// Cut counts the requests a kill left without an answer; Landed, those
	// of them the restarted daemon showed had taken effect.
	Cut, Landed int
	// Recovered counts the journals the restarts recovered, as they log;
	// RecoveredKinds counts them by kind and outcome, for instance
	// "folder rename renamed=true" or "onboarding registered=false".
	Recovered      int
	RecoveredKinds map[string]int
	// JournalsLeft counts by kind the journals the killed or stopped
	// daemons left in the database, each of which the next start must
	// settle (for instance "worktree-delete").
	JournalsLeft map[string]int
	// Pending counts the journals a restart left pending: logged as
	// such, or still in the database at the next kill or stop.
	Pending int
	// Lost counts acknowledged facts a restart no longer showed (missing,
	// or changed by nothing acknowledged); Unexpected, facts it showed that
	// neither an acknowledged write nor a cut request explains.
	Lost, Unexpected int
	// Refused counts writes answered with an error status: none is
	// expected, since every writer owns its resources.
	Refused int
	// Notes counts what the families noted (Writer.Note) by
	// "<family>: <what>".
	Notes map[string]int
	// Problems describe every finding, the first maxProblems of them.
	Problems []string
	Elapsed  time.Duration
}

const maxProblems = 50

// AckedTotal is the number of acknowledged writes.
func (f Figures) AckedTotal() int {
	n := 0
	for _, v := range f.Acked {
		n += v
	}
	return n
}

// AckedByFamily is Acked summed by family: a run acknowledges at least
// Kills × CrashConfig.Writers writes of every family.
func (f Figures) AckedByFamily() map[string]int {
	by := map[string]int{}
	for k, v := range f.Acked {
		fam, _, _ := strings.Cut(k, "/")
		by[fam] += v
	}
	return by
}

// String summarizes the figures in a few lines, acknowledged writes by
// family and operation.
func (f Figures) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d kills, %d writers, %d acknowledged writes, %d lost, %d unexpected, "+
		"%d cut by a kill (%d landed), %d journals recovered, %d pending, %d refused, %s\n",
		f.Seed, f.Kills, f.Writers, f.AckedTotal(), f.Lost, f.Unexpected, f.Cut, f.Landed,
		f.Recovered, f.Pending, f.Refused, f.Elapsed.Round(time.Millisecond))
	for _, k := range slices.Sorted(maps.Keys(f.Acked)) {
		fmt.Fprintf(&b, "  acknowledged %-36s %d\n", k, f.Acked[k])
	}
	for _, k := range slices.Sorted(maps.Keys(f.RecoveredKinds)) {
		fmt.Fprintf(&b, "  recovered    %-36s %d\n", k, f.RecoveredKinds[k])
	}
	for _, k := range slices.Sorted(maps.Keys(f.JournalsLeft)) {
		fmt.Fprintf(&b, "  left         %-36s %d\n", k, f.JournalsLeft[k])
	}
	for _, k := range slices.Sorted(maps.Keys(f.Notes)) {
		fmt.Fprintf(&b, "  noted        %-36s %d\n", k, f.Notes[k])
	}
	for _, p := range f.Problems {
		fmt.Fprintf(&b, "  problem: %s\n", p)
	}
	return b.String()
}

// problem records a finding.
func (f *Figures) problem(format string, args ...any) {
	if len(f.Problems) < maxProblems {
		f.Problems = append(f.Problems, fmt.Sprintf(format, args...))
	}
}
