package hostop_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/adapters/internal/hostop"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// halfPipe is one end of a stream that can be closed for writing alone,
// as an ssh channel can.
type halfPipe struct {
	io.Reader
	w    *io.PipeWriter
	stop func()
}

func (p halfPipe) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p halfPipe) CloseWrite() error           { return p.w.Close() }
func (p halfPipe) Close() error                { p.stop(); return nil }

// lendTo is an Options.Lend that serves each clone in this process with
// git (a fake's clone, lent nothing), and records what it was lent; cut
// breaks the stream of the clone running, as a lost connection does.
type lendTo struct {
	git  *fakes.Git
	wg   sync.WaitGroup
	mu   sync.Mutex
	lent []gitcmd.Lent
	cut  func()
	err  error // the last server's end
}

func (l *lendTo) lend(ctx context.Context, creds hub.SessionCredentials, args ...string) (hostop.LentStream, gitcmd.Lent, error) {
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	var once sync.Once
	cut := func() {
		once.Do(func() {
			c2sR.CloseWithError(io.ErrClosedPipe)
			s2cR.CloseWithError(io.ErrClosedPipe)
		})
	}
	l.mu.Lock()
	l.cut = cut
	l.mu.Unlock()
	lent := gitcmd.Lent{Home: "/home/ann/.cache/wharf/run/x/git-home", Env: []string{"SSH_AUTH_SOCK=/run/x/agent.sock"}}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		err := hostop.ServeLent(context.Background(), c2sR, s2cW, fakeLent{l})
		s2cW.Close()
		l.mu.Lock()
		l.err = err
		l.mu.Unlock()
	}()
	return halfPipe{Reader: s2cR, w: c2sW, stop: cut}, lent, nil
}

// fakeLent runs the fake git's clones and fetches, recording what each
// was lent.
type fakeLent struct{ l *lendTo }

func (f fakeLent) record(lent gitcmd.Lent) {
	f.l.mu.Lock()
	defer f.l.mu.Unlock()
	f.l.lent = append(f.l.lent, lent)
}

func (f fakeLent) CloneLent(ctx context.Context, url, target string, lent gitcmd.Lent) (hub.CloneRun, error) {
	f.record(lent)
	return f.l.git.Clone(ctx, hub.CloneRequest{URL: url, Target: target})
}

func (f fakeLent) FetchLent(ctx context.Context, dir string, lent gitcmd.Lent) error {
	f.record(lent)
	return f.l.git.Fetch(ctx, dir, hub.SessionCredentials{})
}

func newCloner(t *testing.T) (*hostop.Client, *lendTo, *fakes.FS) {
	fsys := fakes.NewFS("/home/ann")
	fsys.MkdirAll("/home/ann/src")
	l := &lendTo{git: fakes.NewGit(fsys)}
	t.Cleanup(func() {
		l.mu.Lock()
		if l.cut != nil {
			l.cut() // a failed test's clone ends with its stream
		}
		l.mu.Unlock()
		l.wg.Wait()
	})
	c := hostop.NewClient(hostop.Options{Lend: l.lend})
	t.Cleanup(func() { c.Close() })
	return c, l, fsys
}

func TestACloneCrossesWithWhatItWasLentAndItsPromptsAndItsEnd(t *testing.T) {
	is := is.New(t)
	c, l, fsys := newCloner(t)
	l.git.ScriptClone("https://example.com/app.git", fakes.CloneScript{Output: []string{"Cloning into 'app'...\r\n"},
		Prompts: []string{"Username: "}, Answers: []string{"ann"}})
	run, err := c.Clone(t.Context(), hub.CloneRequest{URL: "https://example.com/app.git", Target: "/home/ann/src/app"})
	is.NoErr(err) // started there
	out := readUntil(t, run, "Username: ")
	is.True(strings.Contains(out, "Cloning into 'app'...")) // git's output crossed
	_, err = run.Write([]byte("ann\n"))
	is.NoErr(err) // an answer crossed back
	rest, err := io.ReadAll(run)
	is.NoErr(err) // then the end of the output
	is.True(!strings.Contains(string(rest), "Username: "))
	is.NoErr(run.Wait()) // git succeeded there
	_, err = fsys.Lstat("/home/ann/src/app")
	is.NoErr(err)                                                                                                                      // into the target
	is.Equal(l.lent, []gitcmd.Lent{{Home: "/home/ann/.cache/wharf/run/x/git-home", Env: []string{"SSH_AUTH_SOCK=/run/x/agent.sock"}}}) // lent what the lender projected
}

func TestACloneRefusedThereKeepsItsKind(t *testing.T) {
	is := is.New(t)
	c, _, fsys := newCloner(t)
	fsys.MkdirAll("/home/ann/src/app")
	_, err := c.Clone(t.Context(), hub.CloneRequest{URL: "https://example.com/app.git", Target: "/home/ann/src/app"})
	is.Equal(hub.KindOf(err), hub.Conflict) // the target exists there
	_, err = c.Clone(t.Context(), hub.CloneRequest{URL: "https://example.com/app.git", Target: "src/app"})
	is.Equal(hub.KindOf(err), hub.Invalid) // a relative target
	_, err = hostop.NewClient(hostop.Options{}).Clone(t.Context(), hub.CloneRequest{})
	is.Equal(hub.KindOf(err), hub.Invalid) // a client that cannot lend refuses
}

func TestKillingACloneEndsItThere(t *testing.T) {
	is := is.New(t)
	c, l, fsys := newCloner(t)
	l.git.ScriptClone("https://example.com/app.git", fakes.CloneScript{Output: []string{"Cloning into 'app'...\r\n",
		"Receiving objects: 1%\r"}, Stall: true})
	run, err := c.Clone(t.Context(), hub.CloneRequest{URL: "https://example.com/app.git", Target: "/home/ann/src/app"})
	is.NoErr(err)
	readUntil(t, run, "Cloning into")
	killed := make(chan error, 1)
	go func() { killed <- run.Kill() }() // nobody reads its output meanwhile
	select {
	case err := <-killed:
		is.NoErr(err) // the end of the client's frames
	case <-time.After(5 * time.Second): // well within cloneKillWait: the end is read at once
		t.Fatal("Kill did not return")
	}
	_, err = io.Copy(io.Discard, run)
	is.NoErr(err) // the output ends
	err = run.Wait()
	is.True(err != nil) // killed there, and said so
	_, err = fsys.Lstat("/home/ann/src/app")
	is.True(errors.Is(err, fs.ErrNotExist)) // leaving no target
	is.NoErr(run.Kill())                    // killing an ended clone does nothing
}

func TestALostStreamKillsTheCloneThereAndSaysSo(t *testing.T) {
	is := is.New(t)
	c, l, fsys := newCloner(t)
	l.git.ScriptClone("https://example.com/app.git", fakes.CloneScript{Output: []string{"Cloning into 'app'...\r\n"}, Stall: true})
	run, err := c.Clone(t.Context(), hub.CloneRequest{URL: "https://example.com/app.git", Target: "/home/ann/src/app"})
	is.NoErr(err)
	readUntil(t, run, "Cloning into")
	l.mu.Lock()
	l.cut()
	l.mu.Unlock()
	_, _ = io.Copy(io.Discard, run)
	err = run.Wait()
	is.Equal(hub.KindOf(err), hub.Unavailable)                                           // the Hub learns the connection went
	is.Equal(hub.MessageOf(err), "the connection to the host was lost during the clone") // in the user's terms
	l.wg.Wait()                                                                          // the server ended
	_, err = fsys.Lstat("/home/ann/src/app")
	is.True(errors.Is(err, fs.ErrNotExist)) // having killed git, which left no target
}

// readUntil reads run's output until it holds want, within a bound.
func readUntil(t *testing.T, run hub.CloneRun, want string) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		var b strings.Builder
		buf := make([]byte, 1024)
		for !strings.Contains(b.String(), want) {
			n, err := run.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		got <- b.String()
	}()
	select {
	case s := <-got:
		if !strings.Contains(s, want) {
			t.Fatalf("the output ended without %q: %q", want, s)
		}
		return s
	case <-time.After(20 * time.Second):
		t.Fatalf("the output never held %q", want)
		return ""
	}
}
