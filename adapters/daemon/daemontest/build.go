package daemontest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Package is the import path of the wharf command that Build builds.
const Package = "github.com/wharfhub/wharf/cmd/wharf"

// BuildBinary builds the wharf command into dir/wharf with extra go build
// flags (for instance "-race") and returns the binary's path. The working
// directory must be inside this module, as it is for a test (its package
// directory) and for `go run ./bench/...` from the module root. It runs the
// go command of the toolchain that runs this program when it can find it
// ($GOROOT/bin/go), else the first go on $PATH.
func BuildBinary(ctx context.Context, dir string, flags ...string) (string, error) {
	return BuildPackage(ctx, dir, Package, flags...)
}

// BuildPackage builds the command pkg of this module (an import path)
// into dir, named after its last element, as BuildBinary builds wharf:
// the scripted agent (github.com/wharfhub/wharf/fakes/acpagent), say.
func BuildPackage(ctx context.Context, dir, pkg string, flags ...string) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	args := append(append([]string{"build", "-o", bin}, flags...), pkg)
	cmd := exec.CommandContext(ctx, goCommand(), args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// goCommand returns the go command to build with. The go command exports
// GOROOT to the programs it runs (go test, go run), and a toolchain switch
// (GOTOOLCHAIN) puts the chosen toolchain's bin first on $PATH; either way
// the build uses the toolchain this program was built with.
func goCommand() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); isExecutable(p) {
			return p
		}
	}
	return "go"
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// shared is the binary Build hands out, with the count of tests using it.
var shared struct {
	mu    sync.Mutex
	dir   string
	bin   string
	users int
}

// Build returns the path of a wharf binary built from this module, built
// once for all the tests of a run that use it at the same time: the first
// caller builds it (later callers wait), and it is removed when the last
// test using it ends. A build failure fails tb.
func Build(tb testing.TB) string {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.users == 0 {
		dir, err := os.MkdirTemp("", "wharf-daemontest-")
		if err != nil {
			tb.Fatalf("daemontest: %v", err)
		}
		bin, err := BuildBinary(tb.Context(), dir)
		if err != nil {
			os.RemoveAll(dir)
			tb.Fatalf("daemontest: %v", err)
		}
		shared.dir, shared.bin = dir, bin
	}
	shared.users++
	tb.Cleanup(func() {
		shared.mu.Lock()
		defer shared.mu.Unlock()
		if shared.users--; shared.users == 0 {
			os.RemoveAll(shared.dir)
			shared.dir, shared.bin = "", ""
		}
	})
	return shared.bin
}
