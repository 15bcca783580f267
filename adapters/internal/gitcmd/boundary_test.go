package gitcmd_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"
)

const module = "github.com/wharfhub/wharf"

// startsPrograms are the packages of the wharf binary (the Hub and the
// workspace child) that may import os/exec: gitcmd runs git, local starts
// workspace children and acp starts agents and their terminals. Another
// package joins only after review, and never to run git.
//
// credtools probes the credential tools once each (ssh -V, gpg
// --version, …), git among them as `git --version`: an executable at a
// path it found or the owner chose, never named by a constant, run in
// "/" with only PATH and the C locale, so it reads no repository's config
// and runs no program one names.
//
// procgroup starts the programs acp and the agent-account drivers give
// it (it names none); the agent-account drivers (adapters/agentaccount/…)
// run each agent's own login program, found on the login runtime's PATH,
// and never git.
//
// shells (adapters/child/shells) starts the user's login shell in a
// workspace's PTY, never git itself.
//
// osservice runs the service manager's own tools (systemctl, loginctl,
// launchctl) for `wharf service`, never git.
//
// sshhost runs the system's ssh (never a path a repository or a host
// names) with fixed POSIX sh scripts on the host, whose arguments are
// quoted positional parameters; git runs there only inside `wharf
// session` and `wharf hostop`, through gitcmd.
var startsPrograms = []string{
	module + "/adapters/internal/gitcmd",
	module + "/adapters/local",
	module + "/adapters/sshhost",
	module + "/adapters/acp",
	module + "/adapters/child/shells", // the workspace's login shells
	module + "/adapters/credtools",
	module + "/adapters/internal/procgroup",
	module + "/adapters/agentaccount/internal/driver",
	module + "/adapters/agentaccount/internal/ptyflow",
	module + "/adapters/agentaccount/acplogin",
	module + "/adapters/agentaccount/claude",
	module + "/adapters/agentaccount/codex",
	module + "/adapters/agentaccount/gemini",
	module + "/adapters/agentaccount/opencode",
	module + "/adapters/osservice",
}

// TestOnlyGitcmdRunsGit fails if a package of the wharf binary other than
// gitcmd could start git: by importing os/exec without being one of
// startsPrograms, or, in one of those, by naming git (a string constant
// whose base name is git or git-*) as the program of exec.Command,
// exec.CommandContext, exec.LookPath, os.StartProcess or syscall.Exec and
// ForkExec. Every git Wharf runs then goes through gitcmd's rule: no
// program a repository's config names.
func TestOnlyGitcmdRunsGit(t *testing.T) {
	is := is.New(t)
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \",\"}}", module+"/cmd/wharf").Output()
	is.NoErr(err) // go list works
	checked := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) != 3 || !strings.HasPrefix(fields[0], module+"/") || fields[2] == "" {
			continue
		}
		pkg, dir := fields[0], fields[1]
		if pkg == module+"/adapters/internal/gitcmd" {
			continue
		}
		checked[pkg] = true
		for _, name := range strings.Split(fields[2], ",") {
			for _, finding := range startsGit(t, filepath.Join(dir, name), slices.Contains(startsPrograms, pkg)) {
				t.Errorf("%s: %s", filepath.Join(pkg, name), finding)
			}
		}
	}
	for _, pkg := range []string{"adapters/gitexec", "adapters/child/docfeed", "adapters/local", "adapters/acp", "cmd/wharf"} {
		is.True(checked[module+"/"+pkg]) // the binary's own packages were read
	}
}

// startsGit returns what in the Go file at p could start git: an import
// of os/exec (unless allowed), or a call naming git as its program.
func startsGit(t *testing.T, p string, allowed bool) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // local package name -> import path
	for _, imp := range f.Imports {
		ipath, _ := strconv.Unquote(imp.Path.Value)
		name := path.Base(ipath)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = ipath
	}
	var found []string
	for _, imp := range f.Imports {
		if imp.Path.Value == `"os/exec"` && !allowed {
			found = append(found, "imports os/exec: only gitcmd runs git, and only the packages in startsPrograms start programs")
		}
	}
	consts := stringConsts(f)
	// which argument names the program, per function
	programArg := map[string]int{
		"os/exec.Command": 0, "os/exec.CommandContext": 1, "os/exec.LookPath": 0,
		"os.StartProcess": 0, "syscall.Exec": 0, "syscall.ForkExec": 0,
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok || names[pkg.Name] == "" {
			return true
		}
		i, ok := programArg[names[pkg.Name]+"."+sel.Sel.Name]
		if !ok || i >= len(call.Args) {
			return true
		}
		if prog, ok := stringValue(call.Args[i], consts); ok && isGit(prog) {
			found = append(found, fset.Position(call.Pos()).String()+": runs git outside gitcmd")
		}
		return true
	})
	return found
}

// stringConsts maps the file's string constants to their values.
func stringConsts(f *ast.File) map[string]string {
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range spec.Names {
			if i < len(spec.Values) {
				if lit, ok := spec.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if v, err := strconv.Unquote(lit.Value); err == nil {
						out[name.Name] = v
					}
				}
			}
		}
		return true
	})
	return out
}

func stringValue(e ast.Expr, consts map[string]string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			v, err := strconv.Unquote(e.Value)
			return v, err == nil
		}
	case *ast.Ident:
		v, ok := consts[e.Name]
		return v, ok
	}
	return "", false
}

func isGit(prog string) bool {
	base := path.Base(prog)
	return base == "git" || strings.HasPrefix(base, "git-")
}

// TestTheBoundaryCheckSeesGit runs startsGit on files that start git in
// each way it looks for, so that a check that saw nothing is not mistaken
// for a clean binary.
func TestTheBoundaryCheckSeesGit(t *testing.T) {
	for name, src := range map[string]string{
		"a literal":              `package p; import "os/exec"; func f() { exec.Command("git", "status") }`,
		"a path":                 `package p; import "os/exec"; func f() { exec.CommandContext(nil, "/usr/bin/git") }`,
		"a constant":             `package p; import x "os/exec"; const g = "git"; func f() { x.Command(g) }`,
		"a helper":               `package p; import "os/exec"; func f() { exec.LookPath("git-upload-pack") }`,
		"os.StartProcess":        `package p; import "os"; func f() { os.StartProcess("git", nil, nil) }`,
		"an import, not allowed": `package p; import "os/exec"; var _ = exec.Command`,
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			p := filepath.Join(t.TempDir(), "p.go")
			if err := writeFile(p, src); err != nil {
				t.Fatal(err)
			}
			allowed := name != "an import, not allowed"
			is.Equal(len(startsGit(t, p, allowed)), 1) // seen
		})
	}
}

func writeFile(p, s string) error { return os.WriteFile(p, []byte(s), 0o600) }
