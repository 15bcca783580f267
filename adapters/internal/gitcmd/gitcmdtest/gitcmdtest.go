// Package gitcmdtest builds, for tests, a repository whose own
// configuration names a program in every place git runs one from, so a
// test can run Wharf's git operations in it and check that none ran.
//
// Each program only creates its marker file, named after the place; Ran
// lists them. The scene also arms them: every tracked file differs from
// the index in modification time only (so status and diff pass it through
// the clean filter), HEAD is a signed commit (so log.showSignature runs
// the signature program), a submodule has its own filter and a file as
// stale, and the merge base with refs/remotes/origin/main is an older
// commit (so the feed's base comparison runs).
package gitcmdtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Scene is a hostile repository and what a test needs to use it.
type Scene struct {
	// Top is the work tree's top level, Wharf's workspace folder.
	Top string
	// Env is an environment for git: PATH, and a HOME whose user config
	// names no program, so every program is the repository's.
	Env []string
	// Git is a wrapper of the real git that logs each command line, for
	// Commands.
	Git string

	dir     string // everything of the scene
	markers string
	log     string
	stale   int // how many times Stale has run
}

// Places are the settings that name a program, by marker name: each is
// set in the repository's config (or a file it includes) to a program
// creating that marker.
var Places = []string{
	"filter.x.clean", "filter.x.smudge", "filter.p.process", "include.path", "includeIf.path",
	"diff.x.textconv", "diff.x.command", "diff.external", "merge.x.driver",
	"mergetool.x.cmd", "difftool.x.cmd", "core.fsmonitor", "core.hooksPath", "hooks",
	"core.pager", "pager.status", "pager.log", "pager.diff", "core.editor", "sequence.editor",
	"credential.helper", "credential.url.helper", "core.sshCommand", "core.askPass",
	"gpg.program", "gpg.openpgp.program", "gpg.ssh.program", "gpg.x509.program",
	"gpg.ssh.defaultKeyCommand", "core.gitProxy", "core.alternateRefsCommand",
	"remote.origin.url", "remote.origin.uploadpack", "remote.origin.receivepack",
	"url.insteadOf", "submodule.update", "submodule.filter",
}

// New builds the scene in a fresh temporary directory.
func New(t testing.TB) *Scene {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git:", err)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &Scene{Top: filepath.Join(dir, "work"), dir: dir, markers: filepath.Join(dir, "markers"),
		log: filepath.Join(dir, "commands.log"), Git: filepath.Join(dir, "bin", "git")}
	home := filepath.Join(dir, "home")
	for _, d := range []string{s.markers, home, filepath.Join(dir, "bin"), filepath.Join(dir, "hooks")} {
		mkdir(t, d)
	}
	write(t, filepath.Join(home, ".gitconfig"), "[init]\n\tdefaultBranch = main\n[user]\n\tname = T\n\temail = t@example.com\n[protocol \"file\"]\n\tallow = always\n", 0o600)
	s.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}
	write(t, s.Git, "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '"+s.log+"'\nexec '"+gitPath+"' \"$@\"\n", 0o755)

	sub := filepath.Join(dir, "sub")
	s.git(t, dir, "init", "-q", sub)
	write(t, filepath.Join(sub, "s.txt"), "s\n", 0o644)
	write(t, filepath.Join(sub, ".gitattributes"), "* filter=x\n", 0o644)
	s.git(t, sub, "add", ".")
	s.git(t, sub, "commit", "-q", "-m", "sub")

	s.git(t, dir, "init", "-q", s.Top)
	write(t, filepath.Join(s.Top, "a.md"), "a\n", 0o644)
	s.git(t, s.Top, "add", ".")
	s.git(t, s.Top, "commit", "-q", "-m", "base")
	s.git(t, s.Top, "update-ref", "refs/remotes/origin/main", "HEAD")
	files := map[string]string{
		".gitattributes": "* filter=x diff=x merge=x\np.txt filter=p\n",
		"b.md":           "b\n", "p.txt": "p\n", "i.txt": "i\n", "w.txt": "w\n",
	}
	for name, content := range files {
		write(t, filepath.Join(s.Top, name), content, 0o644)
	}
	s.git(t, s.Top, "add", ".")
	s.git(t, s.Top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
	write(t, filepath.Join(s.Top, ".gitmodules"), "[submodule \"sub\"]\n\tpath = sub\n\turl = ../sub\n\tignore = none\n", 0o644)
	s.git(t, s.Top, "add", ".gitmodules")
	s.git(t, s.Top, "commit", "-q", "-m", "second")
	s.signedCommit(t)

	s.arm(t)
	s.Stale(t)
	return s
}

// signedCommit puts on main a commit with an (invalid) signature, which
// log --show-signature hands to the signature program.
func (s *Scene) signedCommit(t testing.TB) {
	tree := strings.TrimSpace(s.git(t, s.Top, "rev-parse", "HEAD^{tree}"))
	parent := strings.TrimSpace(s.git(t, s.Top, "rev-parse", "HEAD"))
	body := "tree " + tree + "\nparent " + parent + "\nauthor T <t@example.com> 1000000000 +0000\n" +
		"committer T <t@example.com> 1000000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n x\n" +
		" -----END PGP SIGNATURE-----\n\nsigned\n"
	p := filepath.Join(s.dir, "commit")
	write(t, p, body, 0o600)
	c := strings.TrimSpace(s.git(t, s.Top, "hash-object", "-t", "commit", "-w", p))
	s.git(t, s.Top, "update-ref", "refs/heads/main", c)
}

// arm writes the programs and the settings naming them.
func (s *Scene) arm(t testing.TB) {
	prog := func(name string) string {
		p := filepath.Join(s.dir, "bin", strings.ReplaceAll(name, "/", "-"))
		write(t, p, "#!/bin/sh\n: >> '"+filepath.Join(s.markers, name)+"'\n", 0o755)
		return p
	}
	gitDir := filepath.Join(s.Top, ".git")
	for _, h := range []string{"pre-commit", "commit-msg", "post-commit", "post-checkout", "post-merge",
		"reference-transaction", "pre-auto-gc", "post-index-change", "pre-push", "post-rewrite"} {
		write(t, filepath.Join(s.dir, "hooks", h), "#!/bin/sh\n: >> '"+filepath.Join(s.markers, "core.hooksPath")+"'\n", 0o755)
		write(t, filepath.Join(gitDir, "hooks", h), "#!/bin/sh\n: >> '"+filepath.Join(s.markers, "hooks")+"'\n", 0o755)
	}
	inc := filepath.Join(s.dir, "included.cfg")
	write(t, inc, "[filter \"y\"]\n\tclean = "+prog("include.path")+"\n", 0o644)
	incIf := filepath.Join(s.dir, "included-if.cfg")
	write(t, incIf, "[filter \"w\"]\n\tclean = "+prog("includeIf.path")+"\n", 0o644)
	write(t, filepath.Join(gitDir, "info", "attributes"), "i.txt filter=y\nw.txt filter=w\n", 0o644)

	settings := [][2]string{
		{"filter.x.clean", prog("filter.x.clean")}, {"filter.x.smudge", prog("filter.x.smudge")},
		{"filter.p.process", prog("filter.p.process")},
		{"include.path", inc}, {"includeIf.gitdir:/.path", incIf},
		{"diff.x.textconv", prog("diff.x.textconv")}, {"diff.x.command", prog("diff.x.command")},
		{"diff.external", prog("diff.external")}, {"merge.x.driver", prog("merge.x.driver")},
		{"mergetool.x.cmd", prog("mergetool.x.cmd")}, {"merge.tool", "x"},
		{"difftool.x.cmd", prog("difftool.x.cmd")}, {"diff.tool", "x"},
		{"core.fsmonitor", prog("core.fsmonitor")}, {"core.hooksPath", filepath.Join(s.dir, "hooks")},
		{"core.pager", prog("core.pager")}, {"pager.status", prog("pager.status")},
		{"pager.log", prog("pager.log")}, {"pager.diff", prog("pager.diff")},
		{"core.editor", prog("core.editor")}, {"sequence.editor", prog("sequence.editor")},
		{"credential.helper", prog("credential.helper")},
		{"credential.https://example.invalid.helper", prog("credential.url.helper")},
		{"core.sshCommand", prog("core.sshCommand")}, {"core.askPass", prog("core.askPass")},
		{"gpg.program", prog("gpg.program")}, {"gpg.openpgp.program", prog("gpg.openpgp.program")},
		{"gpg.ssh.program", prog("gpg.ssh.program")}, {"gpg.x509.program", prog("gpg.x509.program")},
		{"gpg.ssh.defaultKeyCommand", prog("gpg.ssh.defaultKeyCommand")},
		{"core.gitProxy", prog("core.gitProxy")}, {"core.alternateRefsCommand", prog("core.alternateRefsCommand")},
		{"remote.origin.url", "ext::" + prog("remote.origin.url")},
		{"remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"},
		{"remote.origin.uploadpack", prog("remote.origin.uploadpack")},
		{"remote.origin.receivepack", prog("remote.origin.receivepack")},
		{"url.ext::" + prog("url.insteadOf") + ".insteadOf", "https://example.invalid/x"},
		{"remote.mirror.url", "https://example.invalid/m.git"},
		{"protocol.ext.allow", "always"}, {"protocol.allow", "always"},
		{"submodule.sub.update", "!" + prog("submodule.update")},
		{"log.showSignature", "true"}, {"status.submoduleSummary", "true"}, {"submodule.recurse", "true"},
		{"diff.submodule", "diff"}, {"commit.gpgSign", "true"}, {"gc.auto", "1"},
	}
	for _, kv := range settings {
		s.git(t, s.Top, "config", "--add", kv[0], kv[1])
	}
	subGit := strings.TrimSpace(s.git(t, filepath.Join(s.Top, "sub"), "rev-parse", "--absolute-git-dir"))
	s.git(t, s.Top, "config", "--file", filepath.Join(subGit, "config"), "filter.x.clean", prog("submodule.filter"))
	s.git(t, s.Top, "-c", "core.hooksPath=/dev/null", "-c", "filter.x.clean=", "-c", "core.fsmonitor=false",
		"-c", "filter.y.clean=", "-c", "filter.w.clean=", "-c", "filter.p.process=", "update-index", "--refresh", "-q")
	if ran := s.Ran(t); len(ran) > 0 {
		t.Fatalf("the scene's own setup ran %v", ran)
	}
}

// Stale gives every tracked file, in the repository and its submodule, a
// modification time the index does not hold, different at each call, so
// git must read (and filter) each file again to compare it.
func (s *Scene) Stale(t testing.TB) {
	t.Helper()
	s.stale++
	at := time.Date(2001, 1, 1, 0, 0, s.stale, 0, time.UTC)
	for _, f := range []string{".gitattributes", "a.md", "b.md", "p.txt", "i.txt", "w.txt", ".gitmodules", "sub/s.txt", "sub/.gitattributes"} {
		if err := os.Chtimes(filepath.Join(s.Top, f), at, at); err != nil {
			t.Fatal(err)
		}
	}
}

// Ran returns the places whose program ran since the last call, sorted,
// and forgets them.
func (s *Scene) Ran(t testing.TB) []string {
	t.Helper()
	ents, err := os.ReadDir(s.markers)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
		if err := os.Remove(filepath.Join(s.markers, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}

// Commands returns the command lines run through Git, in order.
func (s *Scene) Commands(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(s.log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// GitDir is the repository's git directory.
func (s *Scene) GitDir() string { return filepath.Join(s.Top, ".git") }

// RawGit runs the real git in dir as a person's own git would, with the
// repository's config in force, for a test's control runs; it returns the
// combined output and ignores the exit status.
func (s *Scene) RawGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(s.Env, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	out, _ := cmd.CombinedOutput()
	return string(out)
}

func (s *Scene) git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(s.Env, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func mkdir(t testing.TB, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t testing.TB, p, content string, mode os.FileMode) {
	t.Helper()
	mkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}
