package credtools_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/credtools"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

const sshVersion = "OpenSSH_9.2p1 Debian-2+deb12u6, OpenSSL 3.0.19 27 Jan 2026"

// TestAnOverrideMustBeAnAbsoluteExecutableRegularFile gives ssh overrides
// that are not usable, with a genuine ssh on PATH: each reads as stale
// and the ssh on PATH is never run (it would say so in a file).
func TestAnOverrideMustBeAnAbsoluteExecutableRegularFile(t *testing.T) {
	dir, onPath := t.TempDir(), t.TempDir()
	ran := filepath.Join(t.TempDir(), "ran")
	script(t, filepath.Join(onPath, "ssh"), "echo >"+quote(ran)+"\n"+genuine(hub.ToolSSH, sshVersion))
	good := filepath.Join(dir, "ssh")
	script(t, good, genuine(hub.ToolSSH, sshVersion))
	mustSymlink(t, good, filepath.Join(dir, "link"))
	mustSymlink(t, dir, filepath.Join(dir, "link-to-folder"))
	mustSymlink(t, filepath.Join(dir, "gone"), filepath.Join(dir, "dangling"))
	script(t, filepath.Join(dir, "not-executable"), genuine(hub.ToolSSH, sshVersion))
	if err := os.Chmod(filepath.Join(dir, "not-executable"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir) // where a relative override would resolve
	p := credtools.New(credtools.Options{Path: onPath})

	for _, c := range []struct {
		name, override string
		ready          bool
	}{
		{"absolute", good, true},
		{"through a symbolic link", filepath.Join(dir, "link"), true},
		{"not clean but absolute", filepath.Join(dir, "folder") + "/../ssh", true},
		{"relative", "ssh", false},
		{"dot-relative", "./ssh", false},
		{"missing", filepath.Join(dir, "missing"), false},
		{"a dangling link", filepath.Join(dir, "dangling"), false},
		{"a folder", filepath.Join(dir, "folder"), false},
		{"a link to a folder", filepath.Join(dir, "link-to-folder"), false},
		{"not executable", filepath.Join(dir, "not-executable"), false},
		{"with a NUL byte", good + "\x00", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			rec := p.Probe(t.Context(), hub.ToolSSH, c.override)
			is.Equal(rec.Path, c.override) // the override, as given
			is.True(rec.Overridden)        // is reported as one
			if c.ready {
				is.Equal(rec.Version, sshVersion) // the override ran
				return
			}
			is.Equal(rec.Results, []hub.ReadinessResult{{Layer: hub.LayerBinary, Status: hub.StatusUnavailable, Message: hub.ToolMsgOverrideStale}}) // stale
			is.Equal(rec.Guidance, hub.ToolGuidance(hub.ToolSSH, runtime.GOOS))                                                                      // with guidance
		})
	}
	_, err := os.Stat(ran)
	is.New(t).True(os.IsNotExist(err)) // the ssh on PATH never ran
}

// TestAnExecutableThatCannotStartIsReported overrides ssh with a file
// the kernel cannot execute (no #! line, no binary format).
func TestAnExecutableThatCannotStartIsReported(t *testing.T) {
	is := is.New(t)
	exe := filepath.Join(t.TempDir(), "ssh")
	is.NoErr(os.WriteFile(exe, []byte("OpenSSH_9.2p1\x00\x01"), 0o755))
	rec := credtools.New(credtools.Options{}).Probe(t.Context(), hub.ToolSSH, exe)
	is.Equal(rec.Results[1], hub.ReadinessResult{Layer: hub.LayerVersion, Status: hub.StatusUnavailable, Message: hub.ToolMsgNotStarted}) // could not start
}

// TestPathIsSearchedWithinItsBounds puts git in one folder of a PATH and
// checks where it is found: within the first 128 folders, in absolute
// folders only, and in a PATH of at most 32768 bytes.
func TestPathIsSearchedWithinItsBounds(t *testing.T) {
	base := t.TempDir()
	tools := filepath.Join(base, "tools")
	mkdir(t, tools)
	script(t, filepath.Join(tools, "git"), genuine(hub.ToolGit, porttest.GenuineVersions[hub.ToolGit]))
	empty := func(n int) []string { // n existing folders without git
		dirs := make([]string, n)
		for i := range dirs {
			dirs[i] = filepath.Join(base, "e", strings.Repeat("d", 1+i%4), "x"+strings.Repeat("0", i/4))
		}
		return dirs
	}
	for _, d := range empty(200) {
		mkdir(t, d)
	}
	t.Chdir(tools) // where relative entries would resolve
	long := "/" + strings.Repeat("a", credtools.MaxPathLen-len(tools)-2)

	for _, c := range []struct {
		name  string
		path  []string
		found bool
	}{
		{"the first folder", []string{tools}, true},
		{"the 128th folder", append(empty(127), tools), true},
		{"the 129th folder", append(empty(128), tools), false},
		{"empty entries count", append(make([]string, 127), tools), true},
		{"empty entries count, past 128", append(make([]string, 128), tools), false},
		{"an empty entry is not the working folder", []string{""}, false},
		{"a relative entry is not looked in", []string{"."}, false},
		{"a PATH of 32768 bytes", []string{long, tools}, true},
		{"a PATH of 32769 bytes", []string{long + "a", tools}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			path := strings.Join(c.path, string(os.PathListSeparator))
			if strings.HasPrefix(c.name, "a PATH of") {
				is.Equal(len(path), map[bool]int{true: credtools.MaxPathLen, false: credtools.MaxPathLen + 1}[c.found]) // the length the row is about
			}
			rec := credtools.New(credtools.Options{Path: path}).Probe(t.Context(), hub.ToolGit, "")
			if !c.found {
				is.Equal(rec.Path, "")                                                                                                              // not found
				is.Equal(rec.Results, []hub.ReadinessResult{{Layer: hub.LayerBinary, Status: hub.StatusUnavailable, Message: hub.ToolMsgNotFound}}) // as such
				return
			}
			is.Equal(rec.Path, filepath.Join(tools, "git"))              // found there
			is.Equal(rec.Version, porttest.GenuineVersions[hub.ToolGit]) // and identified
		})
	}
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
