package sshhost

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os/exec"
	"path"
	"strconv"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childrun"
	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/hub"
)

// A process lent credentials that is not a session: a clone onto the
// host (adapters/internal/hostop's clone.go). Its credentials are
// projected as a session's are (credentials.go) into a private folder of
// its own on the host, their sockets forwarded back for as long as it
// runs; what it was lent reaches it as paths there (gitcmd.Lent), over
// its stream, and never a command line or a file.

// lendScript runs a process lent credentials: $1 is the private runtime
// folder, $2 the name of the credentials folder in it; the command
// follows. From stdin it reads the size of the folder's tar and the tar
// (projection.folder), unpacks it into a fresh private folder, says
// "wharf-unpacked" and waits for "go" while the Hub forwards the
// folder's sockets there. It then runs the command in the foreground,
// its stdin the rest of the channel's, and removes the folder once the
// command has exited, whatever its status.
const lendScript = `umask 077
rt="$1"; n="$2"; shift 2
IFS= read -r size || exit 68
case "$size" in ''|*[!0-9]*) exit 68 ;; esac
mkdir -p "$rt" && chmod 0700 "$rt" || exit 67
rm -rf -- "$rt/$n" && mkdir -- "$rt/$n" || exit 67
head -c "$size" | tar -x -f - -C "$rt/$n" || { rm -rf -- "$rt/$n"; exit 67; }
echo wharf-unpacked
IFS= read -r go && [ "$go" = go ] || { rm -rf -- "$rt/$n"; exit 69; }
"$@"
rc=$?
rm -rf -- "$rt/$n"
exit $rc`

// lentTools are the programs a lent process's projection names on the
// host: ssh from the host's PATH (the Hub's path to its own ssh need not
// exist there). git is run by the server itself.
var lentTools = map[hub.CredentialToolName]string{hub.ToolSSH: "ssh"}

// Lend runs the copied binary with args on the host, lent creds, and
// returns its stream and what it was lent, as paths there. Writes reach
// the process's stdin, reads come from its stdout; its stderr goes to
// the log. The credentials are lent until the process has exited and
// Close returned: Close ends its stdin, waits up to remoteTimeout for it
// to exit, then ends the channel, cancels the forwards and removes the
// projection on the Hub (the script removes the folder on the host).
func (h *Host) Lend(ctx context.Context, creds hub.SessionCredentials, args ...string) (*Lent, gitcmd.Lent, error) {
	r, err := h.connect(ctx)
	if err != nil {
		return nil, gitcmd.Lent{}, err
	}
	bin, err := h.install(ctx, r)
	if err != nil {
		return nil, gitcmd.Lent{}, err
	}
	// A random name as long as a session's (hashLen), so that its
	// sockets' paths fit where a session's do.
	var b [hashLen / 2]byte
	_, _ = rand.Read(b[:])
	name := hex.EncodeToString(b[:])
	run := path.Join(r.root, "run")
	creds.Tools = lentTools
	pr, err := h.project(ctx, creds, name, path.Join(run, name), bin, true)
	if err != nil {
		h.log.Error("lent credentials could not be prepared", "err", err)
		return nil, gitcmd.Lent{}, hub.Wrap(hub.Internal, err, "the credentials could not be prepared")
	}
	m, err := h.takeMaster(ctx)
	if err != nil {
		pr.hub.Close()
		return nil, gitcmd.Lent{}, err
	}
	cmd := h.remoteCommandOn(context.Background(), m.ctl, nil, lendScript, append([]string{run, name, bin}, args...)...)
	p, err := h.startPiped(cmd, h.log.With("lend", args))
	if err != nil {
		pr.hub.Close()
		h.giveMaster(m)
		return nil, gitcmd.Lent{}, err
	}
	l := &Lent{h: h, m: m, cmd: cmd, pipes: p, proj: pr, waited: make(chan struct{})}
	go func() {
		l.err = cmd.Wait()
		close(l.waited)
	}()
	if err := l.begin(ctx); err != nil {
		l.Close()
		return nil, gitcmd.Lent{}, err
	}
	return l, pr.lent(), nil
}

// begin sends the credentials folder, forwards its sockets once the
// script unpacked it, and lets the command run.
func (l *Lent) begin(ctx context.Context) error {
	sent := make(chan error, 1)
	go func() { // a script that exits early stops reading
		_, err := l.pipes.StdinW.Write(l.proj.folder())
		sent <- err
	}()
	unpacked := make(chan bool, 1)
	go func() {
		line, ok := readLine(l.pipes.StdoutR)
		unpacked <- ok && line == "wharf-unpacked"
	}()
	select {
	case ok := <-unpacked:
		if !ok {
			return hub.Errorf(hub.Internal, "the credentials could not be prepared on the host")
		}
	case <-ctx.Done():
		return childrun.StartInterrupted(ctx.Err())
	}
	if err := <-sent; err != nil {
		return hub.Wrap(hub.Internal, err, "the credentials could not be sent to the host")
	}
	if fw := l.proj.forwards(); len(fw) > 0 {
		if err := l.h.forward(ctx, "forward", fw); err != nil {
			return err
		}
		l.forwarded = true
	}
	if _, err := l.pipes.StdinW.Write([]byte("go\n")); err != nil {
		return hub.Wrap(hub.Internal, err, "remote command could not be started")
	}
	return nil
}

// Lent is a process on the host lent credentials (Lend).
type Lent struct {
	h         *Host
	m         *master // the master its channel is on
	cmd       *exec.Cmd
	pipes     *childrun.Pipes
	proj      *projection
	forwarded bool
	waited    chan struct{} // closed once the local ssh is reaped; err is set then
	err       error

	closeOnce sync.Once
}

func (l *Lent) Read(p []byte) (int, error)  { return l.pipes.StdoutR.Read(p) }
func (l *Lent) Write(p []byte) (int, error) { return l.pipes.StdinW.Write(p) }

// CloseWrite ends the process's stdin.
func (l *Lent) CloseWrite() error { return l.pipes.StdinW.Close() }

// Close ends the process (see Lend) and what it was lent. It reports nil
// whatever the process's status: the stream's protocol says whether it
// did its work.
func (l *Lent) Close() error {
	l.closeOnce.Do(func() {
		l.pipes.StdinW.Close()
		t := time.NewTimer(remoteTimeout)
		defer t.Stop()
		select {
		case <-l.waited:
		case <-t.C:
			_ = l.cmd.Process.Kill()
			<-l.waited
		}
		l.pipes.CloseOurEnds()
		if l.forwarded {
			ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
			_ = l.h.forward(ctx, "cancel", l.proj.forwards())
			cancel()
		}
		l.proj.hub.Close()
		l.h.giveMaster(l.m)
	})
	return nil
}

// folder is what lendScript reads: the size of the folder's tar on a
// line, and the tar.
func (pr *projection) folder() []byte {
	return append([]byte(strconv.Itoa(len(pr.files))+"\n"), pr.files...)
}

// lent is what the projection lends a process that runs git itself (a
// clone), as paths on the host.
func (pr *projection) lent() gitcmd.Lent {
	l := gitcmd.Lent{Home: pr.rewrite(path.Join(pr.hub.Dir(), "git-home"))}
	for _, kv := range pr.hub.Vars() {
		l.Env = append(l.Env, pr.rewrite(kv))
	}
	for _, s := range pr.hub.Config() {
		l.Config = append(l.Config, gitcmd.Setting{Key: s.Key, Value: pr.rewrite(s.Value)})
	}
	return l
}
