package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/matryer/is"
	"golang.org/x/sys/unix"
)

// openTTY opens a pseudo-terminal pair: the test types on master, the
// command reads slave as its stdin. It skips the test where there is none.
func openTTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("no pseudo-terminal: unlock: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

// TestUserTerminalPrompt: without --password-stdin on a terminal, user add
// and passwd prompt twice without echo.
func TestUserTerminalPrompt(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	dir := stateDir(t)
	for _, tc := range []struct {
		name    string
		args    []string
		typed   string // the lines typed at the prompts (queued before the command reads)
		wantErr string // "" for success
	}{
		{"add", []string{"add", "tina"}, "tina-password\ntina-password\n", ""},
		{"passwd", []string{"passwd", "tina"}, "tina-password-2\ntina-password-2\n", ""},
		{"passwords differ", []string{"passwd", "tina"}, "tina-password-3\ntina-password-4\n", "the passwords differ"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			master, slave := openTTY(t)
			_, err := master.WriteString(tc.typed)
			is.NoErr(err) // typed
			args := append(append([]string{"user"}, tc.args...), "--state-dir", dir)
			_, stderr, err := wharfCmd(ctx, nil, slave, args...)
			if tc.wantErr == "" {
				is.NoErr(err) // the password is read from the terminal
			} else {
				is.True(err != nil && strings.Contains(err.Error(), tc.wantErr)) // refused with a clear message
			}
			is.True(strings.Contains(stderr, "Password: ")) // the command prompts
			is.True(strings.Contains(stderr, "Again: "))    // twice
		})
	}

	is := is.New(t)
	d := startServe(ctx, t, nil, dir)
	c := newClient(t, nil)
	resp, _ := login(ctx, t, c, d.url, "tina", "tina-password-2")
	is.Equal(resp.StatusCode, http.StatusOK) // the password typed at passwd is the one set
	resp, _ = login(ctx, t, c, d.url, "tina", "tina-password-3")
	is.Equal(resp.StatusCode, http.StatusUnauthorized) // a refused passwd changed nothing
	is.NoErr(d.stop())                                 // the daemon stops cleanly
}

// TestFirstPasswordOnATerminal: on a terminal, serve prints the first
// user's password once and writes no file.
func TestFirstPasswordOnATerminal(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := testContext(t)
	dir := stateDir(t)
	master, slave := openTTY(t)
	seen := newOutput()
	go io.Copy(seen, master) // drain the terminal, as a person's would be
	runCtx, cancel := context.WithCancel(ctx)
	stdout := newOutput()
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, []string{"serve", "--listen", "127.0.0.1:0", "--state-dir", dir},
			envOf(map[string]string{"USER": "ann"}), strings.NewReader(""), stdout, slave)
	}()
	// A terminal turns each newline into CR LF.
	lf := func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
	banner, err := seen.waitFor(ctx, func(s string) bool { return bannerRE.MatchString(lf(s)) })
	is.NoErr(err) // the banner reached the terminal
	name, password, _ := firstPassword(lf(banner))
	is.Equal(name, "ann")                                     // for the first user
	is.True(len(password) >= 16 && !filepath.IsAbs(password)) // with the password itself
	is.Equal(strings.Count(banner, password), 1)              // printed once
	_, err = os.Stat(filepath.Join(dir, "first-user-password"))
	is.True(os.IsNotExist(err)) // and no file holds it
	cancel()
	is.NoErr(<-done) // serve stops cleanly
}
