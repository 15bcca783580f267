package hostop_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/internal/hostop"
	"github.com/wharfhub/wharf/adapters/osfs"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

// serveEnv, when set in a re-executed test binary, makes it a server over
// its stdin and stdout, as `wharf hostop` is; its value is git's HOME.
const serveEnv = "HOSTOP_TEST_SERVE_HOME"

func TestMain(m *testing.M) {
	if home := os.Getenv(serveEnv); home != "" {
		git := gitexec.New(gitexec.Options{Env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}})
		if err := hostop.Serve(context.Background(), os.Stdin, os.Stdout, osfs.FS{}, git); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// tempDir is a canonical, empty temporary directory.
func tempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// gitHome is a HOME whose git config names a default branch and a user.
func gitHome(t testing.TB) string {
	home := tempDir(t)
	cfg := "[init]\n\tdefaultBranch = main\n[user]\n\tname = Test\n\temail = test@example.com\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// pipeServer is a Dial that serves each stream in this process with fsys
// and git, counting the dials.
func pipeServer(t *testing.T, fsys hub.FS, git hub.GitRunner, dials *atomic.Int32) func(context.Context) (io.ReadWriteCloser, error) {
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	return func(ctx context.Context) (io.ReadWriteCloser, error) {
		if dials != nil {
			dials.Add(1)
		}
		client, server := net.Pipe()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer server.Close()
			hostop.Serve(t.Context(), server, server, fsys, git)
		}()
		return client, nil
	}
}

// subprocess is a Dial that runs the test binary as a server.
func subprocess(t *testing.T, home string) func(context.Context) (io.ReadWriteCloser, error) {
	return func(ctx context.Context) (io.ReadWriteCloser, error) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), serveEnv+"="+home)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		cmd.Stderr = t.Output()
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		p := &proc{cmd: cmd, w: stdin, r: stdout}
		t.Cleanup(func() { p.Close() })
		return p, nil
	}
}

type proc struct {
	cmd  *exec.Cmd
	w    io.WriteCloser
	r    io.ReadCloser
	once sync.Once
}

func (p *proc) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *proc) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *proc) Close() error {
	p.once.Do(func() {
		p.w.Close() // EOF: the server ends
		p.cmd.Wait()
	})
	return nil
}

func newClient(t *testing.T, dial func(context.Context) (io.ReadWriteCloser, error)) *hostop.Client {
	c := hostop.NewClient(hostop.Options{Dial: dial, Timeout: 10 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

func fsHarness(t *testing.T, c *hostop.Client) porttest.FSHarness {
	return porttest.FSHarness{FS: c, Root: tempDir(t),
		WriteFile: func(p string) error { return os.WriteFile(p, nil, 0o600) }, Symlink: os.Symlink}
}

func TestTheClientKeepsTheFSContractOverAPipe(t *testing.T) {
	porttest.FS(t, func(t *testing.T) porttest.FSHarness {
		return fsHarness(t, newClient(t, pipeServer(t, osfs.FS{}, nil, nil)))
	})
}

func TestTheClientKeepsTheFSContractOverAProcess(t *testing.T) {
	c := newClient(t, subprocess(t, gitHome(t))) // one server for every case, as a host has
	porttest.FS(t, func(t *testing.T) porttest.FSHarness { return fsHarness(t, c) })
}

func TestTheClientKeepsTheGitContractOverAPipe(t *testing.T) {
	home := gitHome(t)
	git := gitexec.New(gitexec.Options{Env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}})
	porttest.Git(t, func(t *testing.T) (hub.GitRunner, hub.FS, string) {
		c := newClient(t, pipeServer(t, osfs.FS{}, git, nil))
		return c, c, tempDir(t)
	})
}

func TestTheClientKeepsTheGitContractOverAProcess(t *testing.T) {
	c := newClient(t, subprocess(t, gitHome(t)))
	porttest.Git(t, func(t *testing.T) (hub.GitRunner, hub.FS, string) { return c, c, tempDir(t) })
}

// A stream that breaks fails the calls waiting on it (Unavailable), and
// the next call dials a new one.
func TestABrokenStreamFailsItsCallsAndTheNextDialsAgain(t *testing.T) {
	is := is.New(t)
	fsys := &stallFS{FS: fakes.NewFS("/home/ann"), entered: make(chan struct{}, 1), release: make(chan struct{})}
	defer close(fsys.release)
	var dials atomic.Int32
	var first io.Closer
	serve := pipeServer(t, fsys, nil, &dials)
	c := newClient(t, func(ctx context.Context) (io.ReadWriteCloser, error) {
		rwc, err := serve(ctx)
		if first == nil {
			first = rwc
		}
		return rwc, err
	})
	_, err := c.Home()
	is.NoErr(err) // the first call dials
	failed := make(chan error, 1)
	go func() { _, err := c.Lstat("/stall"); failed <- err }()
	select {
	case <-fsys.entered: // the call is on the server
	case <-time.After(10 * time.Second):
		t.Fatal("the call never reached the server")
	}
	first.Close() // the stream breaks
	select {
	case err := <-failed:
		is.Equal(hub.KindOf(err), hub.Unavailable) // the call in flight failed
	case <-time.After(10 * time.Second):
		t.Fatal("a call outlived its stream")
	}
	home, err := c.Home()
	is.NoErr(err)                    // the next call
	is.Equal(home, "/home/ann")      // is answered
	is.Equal(dials.Load(), int32(2)) // on a new stream
}

// stallFS holds a Lstat of /stall until release closes.
type stallFS struct {
	hub.FS
	entered, release chan struct{}
}

func (s *stallFS) Lstat(p string) (fs.FileInfo, error) {
	if p == "/stall" {
		s.entered <- struct{}{}
		<-s.release
	}
	return s.FS.Lstat(p)
}

// fakeServer is a Dial whose server is fn over the other end of a pipe.
func fakeServer(fn func(rw io.ReadWriter)) func(context.Context) (io.ReadWriteCloser, error) {
	return func(context.Context) (io.ReadWriteCloser, error) {
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			fn(server)
		}()
		return client, nil
	}
}

// frame is one frame of body.
func frame(body string) []byte {
	n := len(body)
	return append([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, body...)
}

// readOne reads and drops one frame.
func readOne(r io.Reader) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err == nil {
		io.CopyN(io.Discard, r, int64(n[0])<<24|int64(n[1])<<16|int64(n[2])<<8|int64(n[3]))
	}
}

func TestAServerOfAnotherBuildIsRefused(t *testing.T) {
	is := is.New(t)
	c := newClient(t, fakeServer(func(rw io.ReadWriter) {
		readOne(rw)
		rw.Write(frame(`{"protocol":"wharf-hostop/0"}`))
	}))
	_, err := c.Home()
	is.Equal(hub.KindOf(err), hub.Unavailable)                                              // refused
	is.Equal(hub.MessageOf(err), `the host runs another build of Wharf ("wharf-hostop/0")`) // saying why

	_, _, serr := func() (string, string, error) {
		client, server := net.Pipe()
		defer client.Close()
		done := make(chan error, 1)
		go func() { done <- hostop.Serve(t.Context(), server, server, osfs.FS{}, nil) }()
		client.Write(frame(`{"protocol":"wharf-hostop/0"}`))
		readOne(client) // its own hello, so the peer learns why
		return "", "", <-done
	}()
	is.True(serr != nil) // a server refuses such a client too
}

// A peer that announces a frame over the bound ends the stream before
// anything is allocated for it.
func TestAnOversizedFrameEndsTheStream(t *testing.T) {
	is := is.New(t)
	c := newClient(t, fakeServer(func(rw io.ReadWriter) {
		readOne(rw)
		rw.Write(frame(`{"protocol":"` + hostop.Protocol + `"}`))
		readOne(rw)
		rw.Write([]byte{0x7f, 0xff, 0xff, 0xff}) // 2 GiB, announced
	}))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.Lstat("/")
	runtime.ReadMemStats(&after)
	is.Equal(hub.KindOf(err), hub.Unavailable)          // the call fails
	is.True(after.TotalAlloc-before.TotalAlloc < 1<<20) // with no buffer for the frame

	client, server := net.Pipe()
	defer client.Close()
	done := make(chan error, 1)
	go func() { done <- hostop.Serve(t.Context(), server, server, osfs.FS{}, nil) }()
	client.Write(frame(`{"protocol":"` + hostop.Protocol + `"}`))
	readOne(client)
	client.Write([]byte{0x7f, 0xff, 0xff, 0xff})
	is.True(<-done != nil) // the server ends the stream too
}

// Errors keep their meaning across the wire: the sentinels, a hub.Error's
// kind and public message, and the text for logs.
func TestErrorsKeepTheirMeaningAcrossTheWire(t *testing.T) {
	is := is.New(t)
	root := tempDir(t)
	is.NoErr(os.Mkdir(filepath.Join(root, "full"), 0o755))
	is.NoErr(os.WriteFile(filepath.Join(root, "full", "f"), nil, 0o600))
	is.NoErr(os.WriteFile(filepath.Join(root, "file"), nil, 0o600))
	c := newClient(t, pipeServer(t, osfs.FS{}, nil, nil))

	_, err := c.Lstat(filepath.Join(root, "none"))
	is.True(errors.Is(err, fs.ErrNotExist))                                         // absent
	is.True(strings.Contains(err.Error(), "none"))                                  // the text names the path, for logs
	is.True(errors.Is(c.Mkdir(root), fs.ErrExist))                                  // exists
	is.True(errors.Is(c.RemoveEmpty(filepath.Join(root, "full")), hub.ErrNotEmpty)) // not empty
	is.True(errors.Is(c.RemoveEmpty(filepath.Join(root, "file")), hub.ErrNotDir))   // not a directory
	is.NoErr(os.Chmod(filepath.Join(root, "full"), 0o500))
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "full"), 0o755) })
	if os.Geteuid() != 0 {
		is.True(errors.Is(c.Mkdir(filepath.Join(root, "full", "x")), fs.ErrPermission)) // refused
	}

	big := fakes.NewFS("/home/ann")
	for i := range hostop.MaxEntries + 1 {
		big.MkdirAll(fmt.Sprintf("/big/d%05d", i))
	}
	bc := newClient(t, pipeServer(t, big, nil, nil))
	_, err = bc.ReadDir("/big")
	is.Equal(hub.KindOf(err), hub.TooLarge)                                                               // a huge folder is refused
	is.Equal(hub.MessageOf(err), fmt.Sprintf("the folder holds more than %d entries", hostop.MaxEntries)) // saying why
	_, err = bc.Clone(t.Context(), hub.CloneRequest{})
	is.Equal(hub.KindOf(err), hub.Invalid) // a client that cannot lend refuses clones
	_, err = bc.ListWorktrees(t.Context(), "/")
	is.Equal(hub.KindOf(err), hub.Unavailable) // a server without git says so
}

// Many calls at once share one stream, each getting its own answer.
func TestConcurrentCallsGetTheirOwnAnswers(t *testing.T) {
	is := is.New(t)
	root := tempDir(t)
	var dials atomic.Int32
	c := newClient(t, pipeServer(t, osfs.FS{}, nil, &dials))
	const n = 64
	for i := range n {
		is.NoErr(os.Mkdir(filepath.Join(root, fmt.Sprintf("d%02d", i)), 0o755))
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			name := fmt.Sprintf("d%02d", i)
			fi, err := c.Lstat(filepath.Join(root, name))
			if err == nil && (fi.Name() != name || !fi.IsDir()) {
				err = fmt.Errorf("asked %s, told %s", name, fi.Name())
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		is.NoErr(err) // each its own answer
	}
	is.Equal(dials.Load(), int32(1)) // over one stream
	es, err := c.ReadDir(root)
	is.NoErr(err)        // a listing
	is.Equal(len(es), n) // whole
	info, err := es[3].Info()
	is.NoErr(err)                                                                    // entries describe themselves
	is.True(info.IsDir() && info.Mode().Perm() == 0o755 && !info.ModTime().IsZero()) // faithfully
}
