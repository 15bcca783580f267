package porttest

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// cloneWait bounds every wait of the clone contract.
const cloneWait = 20 * time.Second

// CloneFixture is what the clone contract runs against: a runner, its
// file system, a folder to clone into, and sources that behave as named.
type CloneFixture struct {
	Git hub.GitRunner
	FS  hub.FS
	// Dir is an existing, empty, canonical folder the clones are made in.
	Dir string
	// Source clones, writing some output.
	Source string
	// Failing fails (git exits with a status of its own).
	Failing string
	// Stalling never answers: the clone runs until killed.
	Stalling string
	// Prompting asks for a user name with a prompt holding Prompt, and
	// once typed, asks again with a prompt holding AfterAnswer
	// ("{answer}" there stands for the typed name); a wrong second
	// answer fails the clone.
	Prompting, Prompt, Answer, AfterAnswer string
}

// GitClone runs the hub.GitRunner's Clone contract.
func GitClone(t *testing.T, newFixture func(t *testing.T) CloneFixture) {
	t.Run("OutputThenEOFAndARepository", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		target := path.Join(f.Dir, "c")
		run, err := f.Git.Clone(t.Context(), hub.CloneRequest{URL: f.Source, Target: target})
		is.NoErr(err) // started
		out := readToEOF(t, run)
		is.True(len(out) > 0) // some output, then EOF
		is.NoErr(waitFor(t, run))
		repo, err := f.Git.Inspect(t.Context(), target)
		is.NoErr(err)                   // the target exists
		is.Equal(repo.TopLevel, target) // and is a repository
		n, err := run.Read(make([]byte, 8))
		is.Equal(n, 0)            // nothing more to read
		is.Equal(err, io.EOF)     // still EOF
		is.NoErr(run.Kill())      // killing an ended clone does nothing
		is.NoErr(waitFor(t, run)) // and Wait still says it succeeded
	})

	t.Run("AFailureSaysHowItEnded", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		target := path.Join(f.Dir, "c")
		run, err := f.Git.Clone(t.Context(), hub.CloneRequest{URL: f.Failing, Target: target})
		is.NoErr(err) // started
		readToEOF(t, run)
		err = waitFor(t, run)
		is.True(err != nil)                                          // failed
		is.True(strings.Contains(hub.MessageOf(err), "exit status")) // saying how
		_, err = f.FS.Lstat(target)
		is.True(errors.Is(err, fs.ErrNotExist)) // and no target is left
	})

	t.Run("KillEndsAStalledCloneAndItsOutput", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		target := path.Join(f.Dir, "c")
		run, err := f.Git.Clone(t.Context(), hub.CloneRequest{URL: f.Stalling, Target: target})
		is.NoErr(err) // started
		killed := make(chan error, 1)
		go func() { killed <- run.Kill() }()
		select {
		case err := <-killed:
			is.NoErr(err) // killed
		case <-time.After(cloneWait):
			t.Fatal("Kill did not return")
		}
		readToEOF(t, run)               // the output ends
		is.True(waitFor(t, run) != nil) // a killed clone did not succeed
		_, err = f.FS.Lstat(target)
		is.True(errors.Is(err, fs.ErrNotExist)) // and leaves no target
	})

	t.Run("InputReachesAPrompt", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		target := path.Join(f.Dir, "c")
		run, err := f.Git.Clone(t.Context(), hub.CloneRequest{URL: f.Prompting, Target: target})
		is.NoErr(err) // started
		r := &outputReader{r: run}
		r.until(t, f.Prompt)
		_, err = run.Write([]byte(f.Answer + "\n"))
		is.NoErr(err)                                                       // typed
		r.until(t, strings.ReplaceAll(f.AfterAnswer, "{answer}", f.Answer)) // the answer reached git
		_, err = run.Write([]byte("not-the-password\n"))
		is.NoErr(err)
		r.toEOF(t)
		is.True(waitFor(t, run) != nil) // a wrong answer fails the clone
		_, err = f.FS.Lstat(target)
		is.True(errors.Is(err, fs.ErrNotExist)) // leaving no target
	})

	t.Run("AnExistingTargetIsRefused", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		target := path.Join(f.Dir, "c")
		is.NoErr(f.FS.Mkdir(target))
		_, err := f.Git.Clone(t.Context(), hub.CloneRequest{URL: f.Source, Target: target})
		is.True(hub.KindOf(err) == hub.Conflict) // refused
		entries, err := f.FS.ReadDir(target)
		is.NoErr(err)
		is.Equal(len(entries), 0) // and left as it was
	})

	t.Run("AMissingParentOrARelativeTargetIsRefused", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		_, err := f.Git.Clone(t.Context(), hub.CloneRequest{URL: f.Source, Target: path.Join(f.Dir, "none", "c")})
		is.True(errors.Is(err, fs.ErrNotExist)) // a missing parent
		_, err = f.FS.Lstat(path.Join(f.Dir, "none"))
		is.True(errors.Is(err, fs.ErrNotExist)) // is not made
		_, err = f.Git.Clone(t.Context(), hub.CloneRequest{URL: f.Source, Target: "relative/c"})
		is.True(hub.KindOf(err) == hub.Invalid) // a relative target
	})
}

// waitFor returns run's Wait, within cloneWait.
func waitFor(t *testing.T, run hub.CloneRun) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(cloneWait):
		t.Fatal("Wait did not return")
		return nil
	}
}

// readToEOF reads run to its end, within cloneWait.
func readToEOF(t *testing.T, run hub.CloneRun) string {
	t.Helper()
	r := &outputReader{r: run}
	return r.toEOF(t)
}

// outputReader reads a clone's output as it comes.
type outputReader struct {
	r   io.Reader
	buf bytes.Buffer
}

// until reads until the output holds want, within cloneWait.
func (o *outputReader) until(t *testing.T, want string) {
	t.Helper()
	if o.read(t, func() bool { return strings.Contains(o.buf.String(), want) }) != nil {
		t.Fatalf("the output ended without %q: %q", want, o.buf.String())
	}
}

// toEOF reads to the end of the output, within cloneWait, and returns
// it all.
func (o *outputReader) toEOF(t *testing.T) string {
	t.Helper()
	if err := o.read(t, func() bool { return false }); !errors.Is(err, io.EOF) {
		t.Fatalf("the output ended with %v, not EOF", err)
	}
	return o.buf.String()
}

// read reads until done or an error, within cloneWait.
func (o *outputReader) read(t *testing.T, done func() bool) error {
	t.Helper()
	res := make(chan error, 1)
	go func() {
		b := make([]byte, 4096)
		for !done() {
			n, err := o.r.Read(b)
			o.buf.Write(b[:n])
			if err != nil {
				res <- err
				return
			}
		}
		res <- nil
	}()
	select {
	case err := <-res:
		return err
	case <-time.After(cloneWait):
		t.Fatalf("the output did not come: %q", o.buf.String())
		return nil
	}
}
