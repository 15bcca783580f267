package hub_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestPureCore fails if the core reaches a transport, process, database or
// driver package: those belong in adapters.
func TestPureCore(t *testing.T) {
	is := is.New(t)
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	is.NoErr(err) // go list works
	forbidden := []string{"net/http", "os/exec", "database/sql", "modernc.org/sqlite",
		"golang.org/x/crypto/ssh/agent", "github.com/SherClockHolmes/webpush-go"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			is.True(dep != f && !strings.HasPrefix(dep, f+"/")) // hub must not import a forbidden package
		}
	}
}
