package sqlite_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestLibcMatchesDriver fails when modernc.org/libc drifts from the version
// modernc.org/sqlite was built against: the driver's documentation requires
// the exact pair, and `go get -u` moves libc on its own. (v1.61.1 of the
// driver also breaks `go mod tidy` behind this module proxy; stay on
// v1.60.1 with libc v1.77.1 until that is fixed.)
func TestLibcMatchesDriver(t *testing.T) {
	is := is.New(t)
	graph, err := exec.Command("go", "mod", "graph").Output()
	is.NoErr(err) // go mod graph works
	have, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "modernc.org/libc").Output()
	is.NoErr(err) // go list works
	driver, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "modernc.org/sqlite").Output()
	is.NoErr(err)
	want := ""
	prefix := "modernc.org/sqlite@" + strings.TrimSpace(string(driver)) + " modernc.org/libc@"
	for _, line := range strings.Split(string(graph), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			want = v
		}
	}
	is.True(want != "")                             // the driver requires a libc
	is.Equal(strings.TrimSpace(string(have)), want) // and the module uses exactly that one
}
