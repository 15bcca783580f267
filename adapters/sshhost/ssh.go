package sshhost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// This file builds ssh command lines and reads ssh's failures.

// hardening are the options every ssh process of a host is given first,
// master or client: ssh takes the first value of an option, so neither
// the configured SSH command nor the user's ssh_config can undo them.
// BatchMode never prompts; StrictHostKeyChecking refuses an unknown or
// changed host key; ForwardAgent and ForwardX11 are off, since the
// credentials the Hub lends a session are forwarded to it alone, never
// the Hub user's agent.
func (h *Host) hardening(ctl string) []string {
	return []string{
		"-o", "ControlPath=" + strings.ReplaceAll(ctl, "%", "%%"),
		"-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=yes",
		"-o", "ForwardAgent=no",
		"-o", "ForwardX11=no",
		"-o", "PermitLocalCommand=no",
		"-o", "ExitOnForwardFailure=yes",
		"-o", "StreamLocalBindUnlink=yes",
		"-e", "none",
	}
}

// tunables follow the configured SSH command, which may change them
// (tests shorten the keep-alive).
var tunables = []string{
	"-o", "ServerAliveInterval=15",
	"-o", "ServerAliveCountMax=3",
	"-o", "LogLevel=ERROR", // ssh's refusals, which connectFailure reads, and nothing chattier
}

// masterCommand starts the master of control socket ctl: it forks into
// the background once authenticated (-f), so its exit status says whether
// the host was reached, and stays (ControlPersist) until Close. Forwards
// from the user's config are cleared: the master forwards only what
// sessions ask.
func (h *Host) masterCommand(ctx context.Context, ctl string) *exec.Cmd {
	args := append(h.sshPrefixOn(ctl), "-o", "ControlMaster=yes", "-o", "ControlPersist=yes",
		"-o", "ClearAllForwardings=yes", "-N", "-f", "--", h.opts.Destination)
	return h.command(ctx, args)
}

// controlCommand is `ssh -O op` on the master of control socket ctl, with
// extra arguments (a forward) before the destination.
func (h *Host) controlCommand(ctx context.Context, ctl, op string, extra ...string) *exec.Cmd {
	args := append(h.sshPrefixOn(ctl), "-O", op)
	args = append(args, extra...)
	return h.command(ctx, append(args, "--", h.opts.Destination))
}

// remoteCommand runs the POSIX sh script on the host over the primary
// master, with args as its positional parameters ($1...). The whole
// command line is quoted for the remote user's shell, which hands it to
// /bin/sh.
func (h *Host) remoteCommand(ctx context.Context, script string, args ...string) *exec.Cmd {
	return h.remoteCommandOn(ctx, h.ctlPath, nil, script, args...)
}

// remoteCommandOn is remoteCommand over the master of control socket ctl,
// with more ssh options before the destination: a session's forward,
// which the master sets up before the command's channel opens and keeps
// until it is cancelled, so the start costs no `ssh -O forward` of its
// own.
func (h *Host) remoteCommandOn(ctx context.Context, ctl string, opts []string, script string, args ...string) *exec.Cmd {
	argv := append(h.sshPrefixOn(ctl), "-o", "ControlMaster=no", "-T")
	argv = append(append(argv, opts...), "--", h.opts.Destination, remoteLine(script, args))
	return h.command(ctx, argv)
}

// remoteLine is the command line that runs script in /bin/sh with args,
// each one word whatever it holds.
func remoteLine(script string, args []string) string {
	line := "/bin/sh -c " + shellQuote(script) + " wharf"
	for _, a := range args {
		line += " " + shellQuote(a)
	}
	return line
}

// sshPrefix is the arguments of every ssh process of the host: the
// hardening, the configured command's own, then the tunables.
func (h *Host) sshPrefix() []string { return h.sshPrefixOn(h.ctlPath) }

// sshPrefixOn is sshPrefix for the master of control socket ctl.
func (h *Host) sshPrefixOn(ctl string) []string {
	args := append(h.hardening(ctl), h.opts.SSH[1:]...)
	return append(args, tunables...)
}

// command is an ssh process of the host in the configured environment.
func (h *Host) command(ctx context.Context, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, h.opts.SSH[0], args...)
	cmd.Env = h.opts.Env
	// A daemonizing master, or a remote command that leaves a process
	// behind, must not hold a Wait on its output forever.
	cmd.WaitDelay = time.Second
	return cmd
}

// shellQuote quotes s as one word for POSIX sh (and the other common
// login shells): single quotes, with each ' written as '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// sshExitFailure is ssh's own exit status for its failures (connection,
// authentication, host key); a remote command's status is its own.
const sshExitFailure = 255

// maxStderr bounds what of ssh's stderr is kept for reading a failure
// and for the log.
const maxStderr = 4096

// boundedBuffer keeps the first maxStderr bytes written to it.
type boundedBuffer struct{ bytes.Buffer }

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := maxStderr - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// connectFailure turns a failed ssh run (err from Run or Wait, its
// stderr) into the host's public error: Unavailable, saying in the user's
// terms why the host could not be reached. ssh's own words stay in the
// cause, for the log; they name hosts and key fingerprints, never secrets,
// but the public message quotes none of them.
func (h *Host) connectFailure(err error, stderr string) error {
	what := classify(stderr)
	msg := fmt.Sprintf("host %s: ", h.opts.Name)
	switch what {
	case failChangedHostKey:
		msg += "its host key has changed since it was last seen; ssh refuses it. " +
			"If the change is expected, remove the old key from known_hosts and test the host again"
	case failUnknownHostKey:
		msg += "its host key is not known; ssh refuses it. " +
			"Confirm the key and add it to known_hosts (for example by connecting once with ssh), then test the host again"
	case failAuth:
		msg += "the login was refused; check the user, the key offered (ssh agent or IdentityFile) and the host's authorized_keys"
	case failUnreachable:
		msg += "unreachable; check the destination, the network and that sshd runs there"
	default:
		msg += "ssh could not connect"
	}
	cause := fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr))
	return hub.Wrap(hub.Unavailable, cause, msg)
}

// failure is why ssh could not connect.
type failure int

const (
	failOther failure = iota
	failChangedHostKey
	failUnknownHostKey
	failAuth
	failUnreachable
)

// classify reads ssh's stderr. OpenSSH's messages are stable across
// versions; the order matters, since a changed key also reports "Host key
// verification failed".
func classify(stderr string) failure {
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(stderr, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("REMOTE HOST IDENTIFICATION HAS CHANGED", "POSSIBLE DNS SPOOFING DETECTED", "has changed and you have requested strict checking"):
		return failChangedHostKey
	case has("Host key verification failed", "host key is known for", "No matching host key"):
		return failUnknownHostKey
	case has("Permission denied", "Too many authentication failures", "no mutual signature algorithm"):
		return failAuth
	case has("Connection refused", "Connection timed out", "No route to host", "Network is unreachable",
		"Could not resolve hostname", "Name or service not known", "Connection closed by",
		"Connection reset", "kex_exchange_identification", "Operation timed out", "Host is down"):
		return failUnreachable
	}
	return failOther
}

// exitStatus is the exit status of a finished command's error, or -1.
func exitStatus(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
