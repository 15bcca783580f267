package shells

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/wharfhub/wharf/adapters/internal/procgroup"
)

const (
	// killGrace is how long a closed shell's process group has between
	// SIGHUP and SIGKILL. With drainGrace it keeps Registry.Close within
	// the Hub's polite stop grace (3 s), so a stop stays polite.
	killGrace = time.Second
	// drainGrace is how long the output may stay open after the shell
	// exited: a background job that kept the terminal holds it.
	drainGrace = time.Second
	// readChunk bounds one read of a PTY, and so one output message.
	readChunk = 32 << 10
)

// process is a PTY shell's process, the leader of its own session and
// process group.
type process struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	// exited is set once the leader exited, before it is reaped: until
	// then its pid names its process group, which no other can take.
	exited bool
}

// signal sends sig to p's process group, unless the leader was reaped
// (its id may name another group by then).
func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.exited {
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// loginShell is the user's shell: $SHELL of env, else the passwd entry's,
// else /bin/sh.
func loginShell(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "SHELL="); ok && filepath.IsAbs(v) {
			return v
		}
	}
	if sh := passwdShell(os.Getuid()); sh != "" {
		return sh
	}
	return "/bin/sh"
}

// passwdShell reads uid's shell from /etc/passwd, "" when there is none.
func passwdShell(uid int) string {
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) == 7 && f[2] == strconv.Itoa(uid) && filepath.IsAbs(f[6]) {
			return f[6]
		}
	}
	return ""
}

// shellEnv is env with TERM and COLORTERM set for xterm.js.
func shellEnv(env []string, dir string) []string {
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TERM=") && !strings.HasPrefix(kv, "COLORTERM=") && !strings.HasPrefix(kv, "PWD=") {
			out = append(out, kv)
		}
	}
	return append(out, "TERM=xterm-256color", "COLORTERM=truecolor", "PWD="+dir)
}

// startPTY starts path as a login shell (argv[0] "-name") in dir with env,
// leading a new session whose controlling terminal is a new PTY of the
// size given, and returns the PTY's controlling side, pollable (so closing
// it ends a read in progress).
func startPTY(path, dir string, env []string, cols, rows int) (*os.File, *process, error) {
	master, tty, err := pty.Open()
	if err != nil {
		return nil, nil, err
	}
	defer tty.Close() // the shell holds its own copies once started
	m, err := pollable(master)
	if err != nil {
		return nil, nil, err
	}
	if err := pty.Setsize(m, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		m.Close()
		return nil, nil, err
	}
	cmd := &exec.Cmd{Path: path, Args: []string{"-" + filepath.Base(path)}, Dir: dir, Env: env,
		Stdin: tty, Stdout: tty, Stderr: tty}
	if err := procgroup.StartInTerminal(cmd); err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, &process{cmd: cmd}, nil
}

// pollable returns a non-blocking copy of f registered with the runtime's
// poller and closes f: pty.Open hands out a blocking file, whose Close
// would not end a read in progress.
func pollable(f *os.File) (*os.File, error) {
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// run reads s's PTY into its ring, writes the keys it is given, and reaps
// its process: once the process exited and its output was read (or
// drainGrace passed), the shell has ended. gone is closed last.
func (s *shell) run() {
	defer close(s.gone)
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, readChunk)
		for {
			n, err := s.pty.Read(buf)
			if n > 0 {
				s.append(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	stopInput := make(chan struct{})
	go s.writeInput(stopInput)
	err := procgroup.Reap(s.proc.cmd, func() {
		s.proc.mu.Lock()
		defer s.proc.mu.Unlock()
		s.proc.exited = true
		// What the shell left in its own group goes with it, as a
		// terminal's hang-up does.
		_ = syscall.Kill(-s.proc.cmd.Process.Pid, syscall.SIGHUP)
	})
	close(stopInput)
	t := time.NewTimer(drainGrace)
	select {
	case <-read:
		t.Stop()
	case <-t.C:
	}
	s.pty.Close()
	<-read
	var code *int
	var ee *exec.ExitError
	switch {
	case err == nil:
		code = new(int)
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		c := ee.ExitCode()
		code = &c
	}
	s.end(code)
}

// writeInput writes the keys of s.in to the PTY until stop is closed. A
// program that reads none makes the write wait, which in turn makes the
// senders of keys wait (the channel is small), as typing into a terminal
// whose program reads nothing does.
func (s *shell) writeInput(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case p := <-s.in:
			if _, err := s.pty.Write(p); err != nil {
				return
			}
		}
	}
}

// hangUp closes s's process: SIGHUP to its group, SIGKILL killGrace
// later unless it is gone by then.
func (s *shell) hangUp() {
	s.stop.Do(func() {
		s.proc.signal(syscall.SIGHUP)
		go func() {
			t := time.NewTimer(killGrace)
			defer t.Stop()
			select {
			case <-s.gone:
			case <-t.C:
				s.proc.signal(syscall.SIGKILL)
			}
		}()
	})
}

// resize sets the PTY's size; the caller holds s.mu.
func (s *shell) resize(cols, rows int) {
	if s.pty != nil {
		_ = pty.Setsize(s.pty, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	}
	s.cols, s.rows = cols, rows
	s.notify()
}
