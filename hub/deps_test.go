package hub_test

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// allowed are packages under a forbidden prefix that reach none of what
// it stands for: github.com/google/uuid (the core's ids) imports
// database/sql/driver for its Value method, interfaces with no database.
var allowed = []string{"database/sql/driver", "database/sql/internal"}

// TestEveryCorePackageIsPure lists every package under hub/ (a new
// family's too) and fails if one reaches a forbidden package, or if the
// vocabulary, the live broker or a family reaches the service: package
// hub is imported by everything and imports no other package of Wharf's
// core but its internal ones, the broker (hub/live) likewise imports only
// hub and hub/internal (the service and the families publish through it,
// never the other way), and a family imports hub, never hub/service.
func TestEveryCorePackageIsPure(t *testing.T) {
	is := is.New(t)
	out, err := exec.Command("go", "list", "./...").Output()
	is.NoErr(err) // go list works
	pkgs := strings.Fields(string(out))
	is.True(len(pkgs) >= 4)                            // hub, hub/service, hub/live and hub/chat at least
	is.True(slices.Contains(pkgs, module+"/hub/live")) // the broker's own rule below looks at a package that exists
	for _, pkg := range pkgs {
		t.Run(strings.TrimPrefix(pkg, module+"/"), func(t *testing.T) {
			is := is.New(t)
			out, err := exec.Command("go", "list", "-deps", pkg).Output()
			is.NoErr(err) // go list works
			for _, dep := range strings.Fields(string(out)) {
				for _, f := range forbidden {
					if !slices.Contains(allowed, dep) {
						is.True(dep != f && !strings.HasPrefix(dep, f+"/")) // no core package imports a forbidden package
					}
				}
				if pkg != module+"/hub/service" && dep != pkg {
					is.True(dep != module+"/hub/service") // only the service is the service
				}
				if pkg == module+"/hub" && strings.HasPrefix(dep, module+"/") {
					is.True(strings.HasPrefix(dep, module+"/hub/internal/") || dep == pkg) // the vocabulary stands alone
				}
				if pkg == module+"/hub/live" && strings.HasPrefix(dep, module+"/") {
					is.True(strings.HasPrefix(dep, module+"/hub/internal/") || dep == module+"/hub" || dep == pkg) // the broker knows only the vocabulary
				}
			}
		})
	}
}

// TestOnlyTheCommitPathUpdatesTheStore type-checks every package under
// hub/ and fails when a call of hub.Store's Update is anywhere but the
// service's commit path (hub/service/commit.go): a write that went around
// it would change the store without the Hub's memory and live stream
// following.
func TestOnlyTheCommitPathUpdatesTheStore(t *testing.T) {
	is := is.New(t)
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", "./...").Output()
	is.NoErr(err) // go list works
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, file, _ := strings.Cut(line, "\t")
		exports[path] = file
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	out, err = exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}", "./...").Output()
	is.NoErr(err) // go list works
	calls := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "\t", 3)
		pkgPath, dir := parts[0], parts[1]
		var files []*ast.File
		for _, name := range strings.Fields(parts[2]) {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
			is.NoErr(err) // the core parses
			files = append(files, f)
		}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
		_, err := (&types.Config{Importer: imp}).Check(pkgPath, fset, files, info)
		is.NoErr(err) // the core type-checks
		for sel, s := range info.Selections {
			recv := s.Recv()
			if p, ok := recv.(*types.Pointer); ok {
				recv = p.Elem()
			}
			named, ok := recv.(*types.Named)
			if s.Kind() != types.MethodVal || s.Obj().Name() != "Update" || !ok ||
				named.Obj().Pkg().Path() != module+"/hub" || named.Obj().Name() != "Store" {
				continue
			}
			pos := fset.Position(sel.Pos())
			calls++
			is.Equal(strings.TrimPrefix(filepath.ToSlash(pos.Filename), filepath.ToSlash(dir)+"/"), "commit.go") // Store.Update is called by the commit path only
			is.Equal(pkgPath, module+"/hub/service")                                                             // the service's
		}
	}
	is.Equal(calls, 1) // the commit path's one call was found: the test looks where it should
}
