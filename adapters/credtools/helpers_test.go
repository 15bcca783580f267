package credtools_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/fakeexec"
	"github.com/wharfhub/wharf/hub"
)

// deadline bounds every wait of these tests for something a probe left.
const deadline = 20 * time.Second

// script writes an executable shell script at p running body.
func script(t *testing.T, p, body string) {
	t.Helper()
	fakeexec.Script(t, p, body)
}

// printing writes an executable at p that prints stdout and stderr,
// byte for byte, and exits with code, whatever its arguments; a negative
// code kills it with that signal instead.
func printing(t *testing.T, p string, stdout, stderr string, code int) {
	t.Helper()
	out, errOut := p+".stdout", p+".stderr"
	if err := os.WriteFile(out, []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(errOut, []byte(stderr), 0o600); err != nil {
		t.Fatal(err)
	}
	end := "exit " + strconv.Itoa(code)
	if code < 0 {
		end = "kill -" + strconv.Itoa(-code) + " $$"
	}
	cat := quote(lookPath(t, "cat"))
	script(t, p, cat+" "+quote(out)+"\n"+cat+" "+quote(errOut)+" >&2\n"+end+"\n")
}

// genuine returns the body of a script that answers tool's probe as the
// genuine tool does (its real output, with version as the first line),
// and anything else with a complaint and exit status 64, so that a probe
// with the wrong argument reads as not the tool.
func genuine(tool hub.CredentialToolName, version string) string {
	arg, out, code := "--version", "", 0
	switch tool {
	case hub.ToolSSH:
		arg, out = "-V", "printf '%s\\n' "+quote(version)+" >&2\n"
	case hub.ToolSSHAgent:
		arg, out, code = "-?", "printf 'unknown option -- ?\\nusage: ssh-agent [-c | -s] [-Dd] [-a bind_address] [-E fingerprint_hash]\\n       ssh-agent [-c | -s] -k\\n' >&2\n", 1
	case hub.ToolSSHAdd:
		arg, out, code = "--help", "printf 'Could not open a connection to your authentication agent.\\n' >&2\n", 2
	case hub.ToolSSHKeygen:
		arg, out, code = "-?", "printf 'unknown option -- ?\\nusage: ssh-keygen [-q] [-a rounds] [-b bits] [-C comment] [-f output_keyfile]\\n' >&2\n", 1
	case hub.ToolGPG, hub.ToolGPGConf:
		out = "printf '%s\\nlibgcrypt 1.10.1\\nCopyright (C) 2022 g10 Code GmbH\\n' " + quote(version) + "\n"
	case hub.ToolGH:
		out = "printf '%s\\nhttps://github.com/cli/cli/releases/tag/v2.45.0\\n' " + quote(version) + "\n"
	default:
		out = "printf '%s\\n' " + quote(version) + "\n"
	}
	return "if [ $# != 1 ] || [ \"$1\" != " + quote(arg) + " ]; then echo \"unknown option: $*\" >&2; exit 64; fi\n" + out + "exit " + strconv.Itoa(code) + "\n"
}

// impostor is the body of a script that answers any probe successfully,
// mentioning every tool's phrase, none at the start of a line.
const impostor = `echo "frob 1.0, a wrapper: not OpenSSH_9.2p1, gpg (GnuPG) 2.2.40, gpgconf (GnuPG) 2.2.40, git version 2.39.5, gh version 2.45.0 or glab 1.46.1"
echo "frob prints usage: ssh-agent [-c | -s], usage: ssh-add [-l], usage: ssh-keygen [-q] and Could not open a connection to your authentication agent."
exit 0
`

// watch makes a FIFO in dir for a probe's script to open for writing
// (exec 3>"$fifo"), so that its children inherit it. opened is closed
// once the script opened it, gone once every process holding it has
// closed it: has exited or was killed.
func watch(t *testing.T, dir string) (fifo string, opened, gone <-chan struct{}) {
	t.Helper()
	fifo = filepath.Join(dir, "watch.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	o, g := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(g)
		f, err := os.Open(fifo) // blocks until the script opens it
		close(o)
		if err != nil {
			return
		}
		defer f.Close()
		_, _ = io.Copy(io.Discard, f) // EOF once no writer is left
	}()
	t.Cleanup(func() {
		// A script that never opened it leaves the open above blocked:
		// open it for writing here, which ends that open and its read.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return fifo, o, g
}

// within fails t unless ch is closed within deadline.
func within(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(deadline):
		t.Fatalf("%s: not within %v", what, deadline)
	}
}

// lookPath finds a program of this machine's, or skips the test.
func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if errors.Is(err, exec.ErrNotFound) {
		t.Skipf("%s is not installed", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// quote quotes s for the shell.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
