package gitexec_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/gitexec"
)

// An unchanged folder is answered without git; every change that alters
// the answer is seen by the very next inspection, however quickly it
// follows (these run within one timestamp tick of each other).
func TestInspectionsAreReusedUntilTheirFilesChange(t *testing.T) {
	env := testEnv(t)
	tests := []struct {
		name   string
		sub    bool                           // inspect the subfolder rather than the top
		change func(t *testing.T, dir string) // made between two inspections
		want   func(is *is.I, dir, branch, top string)
	}{
		{"branch switched", false, func(t *testing.T, dir string) {
			git(t, env, dir, "checkout", "--quiet", "-b", "next")
		}, func(is *is.I, dir, branch, _ string) { is.Equal(branch, "next") }},
		{"branch switched to one of the same length", false, func(t *testing.T, dir string) {
			git(t, env, dir, "symbolic-ref", "HEAD", "refs/heads/mian")
		}, func(is *is.I, dir, branch, _ string) { is.Equal(branch, "mian") }},
		{"detached", false, func(t *testing.T, dir string) {
			git(t, env, dir, "checkout", "--quiet", "--detach")
		}, func(is *is.I, dir, branch, _ string) { is.Equal(branch, "") }},
		{"repository removed", false, func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
				t.Fatal(err)
			}
		}, func(is *is.I, dir, branch, top string) { is.Equal(top, "") }},
		{"folder made a repository of its own", true, func(t *testing.T, dir string) {
			git(t, env, filepath.Join(dir, "sub"), "init", "--quiet")
		}, func(is *is.I, dir, branch, top string) { is.Equal(top, filepath.Join(dir, "sub")) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			dir := newRepo(t, env)
			is.NoErr(os.Mkdir(filepath.Join(dir, "sub"), 0o755)) // a subfolder
			r := newRunner(t, env)
			at := dir
			if tt.sub {
				at = filepath.Join(dir, "sub")
			}

			first, err := r.Inspect(t.Context(), at)
			is.NoErr(err) // first inspection
			runs := gitexec.Runs(r)
			again, err := r.Inspect(t.Context(), at)
			is.NoErr(err)                   // second inspection
			is.Equal(again, first)          // the same answer
			is.Equal(gitexec.Runs(r), runs) // without running git

			tt.change(t, dir)
			after, err := r.Inspect(t.Context(), at)
			is.NoErr(err)                                  // inspection after the change
			tt.want(is, dir, after.Branch, after.TopLevel) // sees it
		})
	}
}

// With a negative MaxAge every inspection runs git.
func TestNegativeMaxAgeNeverReuses(t *testing.T) {
	is := is.New(t)
	env := testEnv(t)
	dir := newRepo(t, env)
	r := gitexec.New(gitexec.Options{Env: env, MaxAge: -1})
	_, err := r.Inspect(t.Context(), dir)
	is.NoErr(err) // first
	runs := gitexec.Runs(r)
	_, err = r.Inspect(t.Context(), dir)
	is.NoErr(err)                   // second
	is.True(gitexec.Runs(r) > runs) // ran git again
}
