package sshhost

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"os/exec"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childrun"
	"github.com/wharfhub/wharf/hub"
)

// execScript runs its arguments: the copied binary and what follows.
const execScript = `exec "$@"`

// Exec runs the copied binary with args on the host, over the master
// (connecting and copying the binary first when needed, within ctx; the
// stream then outlives ctx). Writes reach the remote process's stdin,
// reads come from its stdout; its stderr goes to the log, line by line.
// Close ends its stdin, waits up to StopGrace for it to exit, then ends
// the channel (the remote process then reads the end of its input) and
// reaps the local ssh. The hostop client (adapters/internal/hostop)
// dials its server, `wharf hostop`, this way.
func (h *Host) Exec(ctx context.Context, args ...string) (io.ReadWriteCloser, error) {
	r, err := h.connect(ctx)
	if err != nil {
		return nil, err
	}
	bin, err := h.install(ctx, r)
	if err != nil {
		return nil, err
	}
	cmd := h.remoteCommand(context.Background(), execScript, append([]string{bin}, args...)...)
	p, err := h.startPiped(cmd, h.log.With("exec", args))
	if err != nil {
		return nil, err
	}
	e := &execStream{cmd: cmd, pipes: p, grace: h.opts.StopGrace, waited: make(chan struct{})}
	go func() {
		e.err = cmd.Wait()
		close(e.waited)
	}()
	return e, nil
}

// startPiped starts cmd (a remote command) with pipes for its stdin and
// stdout, which the caller closes itself, and its stderr logged to log,
// line by line.
func (h *Host) startPiped(cmd *exec.Cmd, log *slog.Logger) (*childrun.Pipes, error) {
	cmd.WaitDelay = 0 // the pipes are files the caller closes itself
	p, err := childrun.NewPipes()
	if err != nil {
		return nil, hub.Wrap(hub.Internal, err, "remote command could not be started")
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.ChildEnds()
	err = cmd.Start()
	p.CloseChildEnds()
	if err != nil {
		p.CloseOurEnds()
		h.log.Error("ssh could not be started", "err", err)
		return nil, hub.Wrap(hub.Internal, err, "remote command could not be started")
	}
	go func() {
		sc := bufio.NewScanner(p.StderrR)
		sc.Buffer(make([]byte, 0, 4096), 4096)
		for sc.Scan() {
			log.Debug("remote stderr", "line", sc.Text())
		}
		_, _ = io.Copy(io.Discard, p.StderrR)
	}()
	return p, nil
}

// execStream is the running remote command of Exec.
type execStream struct {
	cmd       *exec.Cmd
	pipes     *childrun.Pipes
	grace     time.Duration
	waited    chan struct{} // closed once the local ssh is reaped; err is set then
	err       error
	closeOnce sync.Once
}

func (e *execStream) Read(p []byte) (int, error)  { return e.pipes.StdoutR.Read(p) }
func (e *execStream) Write(p []byte) (int, error) { return e.pipes.StdinW.Write(p) }

// Close ends the remote command and reaps the local ssh (see Exec). It
// reports nil when the command ended on the end of its input, whatever
// its status: the stream's protocol says whether it did its work.
func (e *execStream) Close() error {
	e.closeOnce.Do(func() {
		e.pipes.StdinW.Close()
		t := time.NewTimer(e.grace)
		defer t.Stop()
		select {
		case <-e.waited:
		case <-t.C:
			_ = e.cmd.Process.Kill()
			<-e.waited
		}
		e.pipes.CloseOurEnds() // the stderr reader ends with it
	})
	var ee *exec.ExitError
	if e.err != nil && !errors.As(e.err, &ee) {
		return e.err
	}
	return nil
}
