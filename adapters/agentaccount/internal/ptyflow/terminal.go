package ptyflow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/wharfhub/wharf/adapters/internal/procgroup"
)

// Bounds of a program in a terminal.
const (
	// MaxScan bounds the output kept while a driver looks for a login's
	// link (text, control sequences removed).
	MaxScan = 64 << 10
	// MaxOutput bounds all the output read from one program: past it
	// the program is killed. A login prints a few kilobytes; a program
	// that goes on to draw a full screen once logged in is killed then
	// anyway.
	MaxOutput = 1 << 20
	// KillGrace is how long Kill waits after SIGTERM before SIGKILL.
	KillGrace = 2 * time.Second
	// goneWithin bounds the wait for a killed group's processes to die.
	goneWithin = 5 * time.Second
	// drainWithin bounds the wait for the rest of the output once the
	// program has ended: a process that left its group could hold the
	// terminal open.
	drainWithin = 2 * time.Second
	// A wide terminal: a long link is printed on one line by every
	// program that wraps to the terminal's width.
	termRows, termCols = 50, 400
)

// Errors of a Terminal. None holds any of the program's output.
var (
	// ErrEnded: the program ended (or its output did) before what was
	// looked for, or before a line could be typed.
	ErrEnded = errors.New("the program ended")
	// ErrTooMuch: MaxScan of output came without what was looked for.
	ErrTooMuch = errors.New("the program printed too much without a login link")
)

// Terminal is a program running in a pseudo-terminal of its own, leading
// its own session (and so process group). Its methods are safe for
// concurrent use.
type Terminal struct {
	cmd    *exec.Cmd
	master *os.File

	mu      sync.Mutex
	text    []byte        // cleaned output kept for Expect, at most MaxScan
	keep    bool          // output is kept: Expect has not found what it looked for
	full    bool          // MaxScan was reached while keeping
	grew    chan struct{} // closed and replaced whenever text grows
	watches []*watch

	sigMu sync.Mutex // held while signalling, so a reaped pid is never signalled
	gone  bool       // the leader was waited for: its pid may be anyone's

	readDone chan struct{} // the reader reached the end of the output
	exited   chan struct{} // the program was reaped and its group is gone
	code     int
	killMu   sync.Mutex
	closeOne sync.Once
}

// watch looks for a marker in the output that follows its start.
type watch struct {
	marker []byte
	tail   []byte // the last len(marker)-1 bytes, for a marker across chunks
	seen   chan struct{}
	done   bool
}

// Start starts c in a new pseudo-terminal of 50×400 characters whose
// echo is off, as the leader of a new session whose controlling terminal
// it is. The caller must Kill it, or see Exited closed.
func Start(c Command) (*Terminal, error) {
	cmd := c.cmd()
	master, tty, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("no terminal: %w", err)
	}
	fail := func(err error) (*Terminal, error) {
		master.Close()
		tty.Close()
		return nil, err
	}
	if err := pty.Setsize(master, &pty.Winsize{Rows: termRows, Cols: termCols}); err != nil {
		return fail(fmt.Errorf("terminal size: %w", err))
	}
	if err := echoOff(tty); err != nil {
		return fail(fmt.Errorf("terminal mode: %w", err))
	}
	if master, err = pollable(master); err != nil {
		tty.Close()
		return nil, fmt.Errorf("terminal: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	err = procgroup.StartInTerminal(cmd)
	tty.Close() // the program holds its own copies
	if err != nil {
		master.Close()
		return nil, err
	}
	t := &Terminal{cmd: cmd, master: master, keep: true, grew: make(chan struct{}),
		readDone: make(chan struct{}), exited: make(chan struct{})}
	go t.readLoop()
	go t.reap()
	return t, nil
}

// pollable returns the terminal's master as a file Go's poller watches,
// and closes f: pty.Open leaves it blocking, where Close cannot end a
// Read (or a Write) waiting in the kernel.
func pollable(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	f.Close()
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), nil
}

// readLoop reads the output to its end (or to MaxOutput, then kills the
// program), keeps what Expect needs and feeds the watches.
func (t *Terminal) readLoop() {
	defer close(t.readDone)
	var (
		clean   Cleaner
		cleaned []byte
		total   int
	)
	buf := make([]byte, 8192)
	for {
		n, err := t.master.Read(buf)
		if n > 0 {
			total += n
			cleaned = clean.Append(cleaned[:0], buf[:n])
			t.take(cleaned)
			if total > MaxOutput {
				t.signal(syscall.SIGKILL)
				return
			}
		}
		if err != nil {
			return // EIO once every holder of the follower closed it; or Kill closed it
		}
	}
}

// take keeps cleaned for Expect (bounded) and feeds it to the watches.
func (t *Terminal) take(cleaned []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.keep && !t.full && len(cleaned) > 0 {
		// Kept, and not watched: the end of this chunk, past what Expect
		// finds, is neither.

		room := MaxScan - len(t.text)
		if len(cleaned) >= room {
			cleaned, t.full = cleaned[:room], true
		}
		t.text = append(t.text, cleaned...)
		close(t.grew)
		t.grew = make(chan struct{})
	}
	if t.keep {
		return // the watches watch what follows what Expect looks for
	}
	for _, w := range t.watches {
		w.feed(cleaned)
	}
}

// feed looks for w's marker in p, following what came before.
func (w *watch) feed(p []byte) {
	if w.done || len(p) == 0 {
		return
	}
	s := append(w.tail, p...)
	if bytes.Contains(s, w.marker) {
		w.done, w.tail = true, nil
		close(w.seen)
		return
	}
	keep := len(w.marker) - 1
	if len(s) < keep {
		keep = len(s)
	}
	w.tail = append(w.tail[:0:0], s[len(s)-keep:]...)
}

// Expect waits until find reports true of the output so far (cleaned by
// a Cleaner; find must not keep it), then stops keeping output. It
// fails with ErrEnded when the output ended first, ErrTooMuch when
// MaxScan came first, or ctx's error. Expect is for one search: a
// second call fails with ErrEnded.
func (t *Terminal) Expect(ctx context.Context, find func(text []byte) bool) error {
	for {
		t.mu.Lock()
		if !t.keep {
			t.mu.Unlock()
			return ErrEnded
		}
		if find(t.text) {
			t.keep, t.text = false, nil
			t.mu.Unlock()
			return nil
		}
		full, grew := t.full, t.grew
		t.mu.Unlock()
		if full {
			return ErrTooMuch
		}
		select {
		case <-grew:
		case <-t.readDone:
			t.mu.Lock()
			found := t.keep && find(t.text)
			t.keep, t.text = false, nil
			t.mu.Unlock()
			if found {
				return nil
			}
			return ErrEnded
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Watch returns a channel closed once marker appears in the output
// (cleaned) read from now on, and after Expect found what it looked for:
// a watch started before Expect sees only what follows (a marker that
// also precedes the link, such as the link's own lead, is not taken for
// a new one). Nothing of the output is kept but the marker's length less
// one byte.
func (t *Terminal) Watch(marker string) <-chan struct{} {
	w := &watch{marker: []byte(marker), seen: make(chan struct{})}
	t.mu.Lock()
	t.watches = append(t.watches, w)
	t.mu.Unlock()
	return w.seen
}

// Type types line and Enter (a carriage return) into the terminal,
// within ctx. Its errors never hold line.
func (t *Terminal) Type(ctx context.Context, line string) error {
	select {
	case <-t.exited:
		return ErrEnded
	default:
	}
	p := []byte(line + "\r")
	done := make(chan error, 1)
	go func() {
		// A write the program does not read blocks until Kill closes
		// the terminal.
		_, err := t.master.Write(p)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return ErrEnded
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Exited is closed once the program was reaped and its group is gone.
func (t *Terminal) Exited() <-chan struct{} { return t.exited }

// ExitCode is the program's exit status once Exited is closed: -1 when a
// signal ended it.
func (t *Terminal) ExitCode() int {
	<-t.exited
	return t.code
}

// reap waits for the program; once it has exited, and before its pid
// (its group's id) can be reused, it kills what is left of its group,
// then reaps it, waits (bounded) for the group to be gone, and closes
// the terminal once its output was read, or drainWithin later.
func (t *Terminal) reap() {
	err := procgroup.Reap(t.cmd, func() {
		t.sigMu.Lock()
		defer t.sigMu.Unlock()
		_ = procgroup.Kill(t.cmd, syscall.SIGKILL)
		t.gone = true
	})
	awaitGroupGone(t.cmd.Process.Pid, goneWithin)
	t.code = exitCode(t.cmd, err)
	close(t.exited)
	timer := time.NewTimer(drainWithin)
	defer timer.Stop()
	select {
	case <-t.readDone:
	case <-timer.C:
	}
	t.closeMaster()
}

// signal sends sig to the program's group while its leader is not
// reaped.
func (t *Terminal) signal(sig syscall.Signal) {
	t.sigMu.Lock()
	defer t.sigMu.Unlock()
	if !t.gone {
		_ = procgroup.Kill(t.cmd, sig)
	}
}

// Kill ends the program's whole group: SIGTERM, then SIGKILL after
// KillGrace; it returns once the program was reaped and its group is
// gone (bounded by goneWithin past the SIGKILL), and the terminal is
// closed. Killing an ended program only closes the terminal.
func (t *Terminal) Kill() {
	t.killMu.Lock()
	defer t.killMu.Unlock()
	defer t.closeMaster()
	select {
	case <-t.exited:
		return
	default:
	}
	t.signal(syscall.SIGTERM)
	grace := time.NewTimer(KillGrace)
	defer grace.Stop()
	select {
	case <-t.exited:
		return
	case <-grace.C:
	}
	t.signal(syscall.SIGKILL)
	bound := time.NewTimer(2 * goneWithin)
	defer bound.Stop()
	select {
	case <-t.exited:
	case <-bound.C:
	}
}

func (t *Terminal) closeMaster() { t.closeOne.Do(func() { t.master.Close() }) }

// exitCode is the exit status of cmd, which Wait answered with err: -1
// when a signal ended it or it could not be read.
func exitCode(cmd *exec.Cmd, err error) int {
	st := cmd.ProcessState
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1
	}
	if err != nil && !st.Exited() {
		return -1
	}
	return st.ExitCode()
}
