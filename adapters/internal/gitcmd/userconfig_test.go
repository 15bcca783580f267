package gitcmd_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
)

func TestUserConfigListsTheGlobalSettingsWithIncludesAndNoRepository(t *testing.T) {
	is := is.New(t)
	home := t.TempDir()
	is.NoErr(os.WriteFile(filepath.Join(home, "extra"), []byte("[alias]\n\tlg = log --oneline\n"), 0o600))
	is.NoErr(os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(
		"[user]\n\tname = Ada \\\"L\\\"\n[include]\n\tpath = extra\n[core]\n\tbare-ish\n"), 0o600))
	repo := t.TempDir()
	is.NoErr(exec.Command("git", "init", "-q", repo).Run())
	is.NoErr(os.WriteFile(filepath.Join(repo, ".git", "config"), []byte("[user]\n\tname = the repository\n"), 0o600))
	r := gitcmd.New(gitcmd.Options{Env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_DIR=" + filepath.Join(repo, ".git")},
		Config: []gitcmd.Setting{{Key: "user.name", Value: "wharf's own"}}})
	got, err := r.UserConfig(t.Context())
	is.NoErr(err) // listed
	var global []gitcmd.Entry
	for _, e := range got {
		if e.Key == "user.name" || e.Key == "alias.lg" || e.Key == "include.path" || e.Key == "core.bare-ish" {
			global = append(global, e)
		}
	}
	is.Equal(global, []gitcmd.Entry{
		{Key: "user.name", Value: `Ada "L"`},
		{Key: "include.path", Value: "extra"},
		{Key: "alias.lg", Value: "log --oneline"}, // the include followed, in place
		{Key: "core.bare-ish", Bare: true},
	}) // the user's settings only: neither the repository's nor Wharf's own
}

func TestUserConfigIsBoundedInSize(t *testing.T) {
	is := is.New(t)
	home := t.TempDir()
	is.NoErr(os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[alias]\n\tx = "+strings.Repeat("y", 4096)+"\n"), 0o600))
	r := gitcmd.New(gitcmd.Options{Env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, MaxStdout: 1024})
	_, err := r.UserConfig(t.Context())
	is.True(errors.Is(err, gitcmd.ErrOutputTooLarge)) // refused whole, never truncated
}

func TestParseConfigList(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want []gitcmd.Entry
		ok   bool
	}{
		{"scopes kept and dropped", "system\x00a.b\nc\x00local\x00d.e\nf\x00global\x00g.h\x00command\x00i.j\nk\x00",
			[]gitcmd.Entry{{Key: "a.b", Value: "c"}, {Key: "g.h", Bare: true}}, true},
		{"a value with newlines", "global\x00a.b\nc\nd\x00", []gitcmd.Entry{{Key: "a.b", Value: "c\nd"}}, true},
		{"empty", "", nil, true},
		{"a cut record", "global\x00a.b\nc", nil, false},
		{"a cut scope", "global", nil, false},
		{"a key without section", "global\x00ab\nc\x00", nil, false},
		{"an unknown scope", "elsewhere\x00a.b\nc\x00", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			got, err := gitcmd.ParseConfigList([]byte(c.in))
			is.Equal(err == nil, c.ok) // accepted or refused
			is.Equal(got, c.want)      // as listed
		})
	}
}

func TestFormatConfigReadsBackAsTheSameSettings(t *testing.T) {
	is := is.New(t)
	in := []gitcmd.Entry{
		{Key: "user.name", Value: "A \"quoted\" \\ name\twith tab"},
		{Key: "alias.x", Value: "!f() { echo $1; }; f"},
		{Key: "core.bare-ish", Bare: true},
		{Key: `url.https://h/"odd".insteadof`, Value: "g:"},
		{Key: "user.email", Value: "a@b"},
	}
	f := filepath.Join(t.TempDir(), "config")
	is.NoErr(os.WriteFile(f, gitcmd.FormatConfig(in), 0o600))
	out, err := exec.Command("git", "config", "-f", f, "--list", "-z").Output()
	is.NoErr(err) // git reads the file
	var got []gitcmd.Entry
	for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		k, v, ok := strings.Cut(rec, "\n")
		got = append(got, gitcmd.Entry{Key: k, Value: v, Bare: !ok})
	}
	is.True(slices.Equal(got, in)) // exactly what was written
}
