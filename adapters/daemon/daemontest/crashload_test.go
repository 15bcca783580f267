package daemontest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
)

// TestCrashLoadReportsLoss proves the crash load sees a lost write: a
// family that claims, with every acknowledgement, a folder it never
// created must be reported after every restart.
func TestCrashLoadReportsLoss(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	lossy := daemontest.FolderFamily()
	lossy.Name = "lossy"
	next := lossy.Next
	lossy.Next = func(w *daemontest.Writer) (daemontest.Op, error) {
		op, err := next(w)
		acked := op.Acked
		op.Acked = func(m daemontest.Model, answer []byte) error {
			m["phantom never-created"] = "" // a key Next never picks
			return acked(m, answer)
		}
		return op, err
	}
	fig, err := daemontest.CrashLoad(t.Context(), daemontest.CrashConfig{Binary: daemontest.Build(t), Dir: t.TempDir(),
		Kills: 2, Writers: 1, MeanUptime: 20 * time.Millisecond, Families: []*daemontest.Family{lossy}})
	t.Logf("figures:\n%s", fig)
	is.NoErr(err)                                                                              // the run went to its end
	is.Equal(fig.Kills, 2)                                                                     // two kills
	is.Equal(fig.Lost, 2)                                                                      // the claimed folder, lost after each (then acknowledged no more)
	is.True(len(fig.Problems) >= 2)                                                            // described
	is.True(strings.Contains(fig.Problems[0], "lossy-0: phantom never-created [] is missing")) // naming the writer and the fact
	is.Equal(fig.Pending, 0)                                                                   // and nothing else
	is.Equal(fig.Refused, 0)                                                                   // went wrong
}
