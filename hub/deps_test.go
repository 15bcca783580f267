package hub_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/matryer/is"
)

const module = "github.com/wharfhub/wharf"

// forbidden are the packages no core package may reach: a transport, a
// process, a database or its driver, an agent protocol, ssh-agent, and
// every adapter. Those belong in adapters.
var forbidden = []string{"net/http", "os/exec", "database/sql", "modernc.org/sqlite",
	"github.com/coder/acp-go-sdk", "golang.org/x/crypto/ssh/agent", module + "/adapters"}

// TestEveryCorePackageIsPure lists every package under hub/ (a new
// family's too) and fails if one reaches a forbidden package, or if the
// vocabulary or a family reaches the service: package hub is imported by
// everything and imports no other package of Wharf's core but its
// internal ones, and a family imports hub, never hub/service.
func TestEveryCorePackageIsPure(t *testing.T) {
	is := is.New(t)
	out, err := exec.Command("go", "list", "./...").Output()
	is.NoErr(err) // go list works
	pkgs := strings.Fields(string(out))
	is.True(len(pkgs) >= 3) // hub, hub/service and hub/chat at least
	for _, pkg := range pkgs {
		t.Run(strings.TrimPrefix(pkg, module+"/"), func(t *testing.T) {
			is := is.New(t)
			out, err := exec.Command("go", "list", "-deps", pkg).Output()
			is.NoErr(err) // go list works
			for _, dep := range strings.Fields(string(out)) {
				for _, f := range forbidden {
					is.True(dep != f && !strings.HasPrefix(dep, f+"/")) // no core package imports a forbidden package
				}
				if pkg != module+"/hub/service" && dep != pkg {
					is.True(dep != module+"/hub/service") // only the service is the service
				}
				if pkg == module+"/hub" && strings.HasPrefix(dep, module+"/") {
					is.True(strings.HasPrefix(dep, module+"/hub/internal/") || dep == pkg) // the vocabulary stands alone
				}
			}
		})
	}
}
