package chat_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestPureCore fails if the conversation core reaches a transport, a
// process or a database: those belong in adapters.
func TestPureCore(t *testing.T) {
	is := is.New(t)
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	is.NoErr(err) // go list works
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range []string{"net/http", "os/exec", "database/sql", "modernc.org/sqlite", "github.com/coder/acp-go-sdk"} {
			is.True(dep != f && !strings.HasPrefix(dep, f+"/")) // hub/chat must not import a forbidden package
		}
	}
}
