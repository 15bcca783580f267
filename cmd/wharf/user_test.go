package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// wharfCmd runs one wharf command in-process and returns its output.
func wharfCmd(ctx context.Context, env map[string]string, stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	err = run(ctx, args, envOf(env), stdin, &out, &errOut)
	return out.String(), errOut.String(), err
}

// userNames returns the first field of each line of `wharf user list`.
func userNames(list string) []string {
	names := []string{}
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names
}

// TestUser administers users with --password-stdin, partly while the daemon
// serves the same state directory, and checks the effects over HTTP.
func TestUser(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := testContext(t)
	dir := stateDir(t)
	env := map[string]string{"USER": "ann"}
	user := func(stdin string, args ...string) (string, string, error) {
		args = append(append([]string{"user"}, args...), "--state-dir", dir)
		return wharfCmd(ctx, env, strings.NewReader(stdin), args...)
	}

	_, stderr, err := user("first-password\n", "add", "bob", "--password-stdin")
	is.NoErr(err)                                         // user add succeeds
	is.True(strings.Contains(stderr, `added user "bob"`)) // and says so
	_, _, err = wharfCmd(ctx, env, strings.NewReader("alice-password\n"),
		"user", "add", "--state-dir", dir, "--password-stdin", "alice")
	is.NoErr(err)                                                             // flags may come before NAME
	is.Equal(fileMode(t, dir), os.FileMode(0o700))                            // user creates a private state directory
	is.Equal(fileMode(t, filepath.Join(dir, "wharf.db")), os.FileMode(0o600)) // and a private database

	stdout, _, err := user("", "list")
	is.NoErr(err)                                         // user list succeeds
	is.Equal(userNames(stdout), []string{"alice", "bob"}) // listing every user by name
	_, _, err = user("other-password\n", "add", "bob", "--password-stdin")
	is.True(err != nil && strings.Contains(err.Error(), `user "bob" already exists`)) // a duplicate is refused clearly

	d := startServe(ctx, t, env, dir)
	is.True(!strings.Contains(d.stderr.String(), "created the first user")) // no first user when users exist
	c := newClient(t, nil)
	resp, s1 := login(ctx, t, c, d.url, "bob", "first-password")
	is.Equal(resp.StatusCode, http.StatusOK) // an added user logs in
	resp, sa := login(ctx, t, c, d.url, "alice", "alice-password")
	is.Equal(resp.StatusCode, http.StatusOK) // so does the other

	_, stderr, err = user("second-password\n", "passwd", "bob", "--password-stdin")
	is.NoErr(err)                                                                 // passwd succeeds while the daemon runs
	is.True(strings.Contains(stderr, "ended its sessions"))                       // and says what it did
	is.Equal(authStatus(ctx, t, c, d.url, s1.SessionID), http.StatusUnauthorized) // bob's earlier session is ended
	is.Equal(authStatus(ctx, t, c, d.url, sa.SessionID), http.StatusOK)           // alice's is untouched
	resp, _ = login(ctx, t, c, d.url, "bob", "first-password")
	is.Equal(resp.StatusCode, http.StatusUnauthorized) // the old password no longer works
	resp, s2 := login(ctx, t, c, d.url, "bob", "second-password")
	is.Equal(resp.StatusCode, http.StatusOK) // the new one does

	_, stderr, err = user("", "remove", "bob")
	is.NoErr(err)                                                                 // remove succeeds
	is.True(strings.Contains(stderr, `removed user "bob"`))                       // and says so
	is.Equal(authStatus(ctx, t, c, d.url, s2.SessionID), http.StatusUnauthorized) // a removed user's sessions end
	resp, _ = login(ctx, t, c, d.url, "bob", "second-password")
	is.Equal(resp.StatusCode, http.StatusUnauthorized) // and it can no longer log in
	is.NoErr(d.stop())                                 // the daemon stops cleanly

	stdout, _, err = user("", "list")
	is.NoErr(err)                                  // list still works
	is.Equal(userNames(stdout), []string{"alice"}) // without the removed user
}

func TestUserDefaultStateDir(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	xdg := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": xdg}
	_, _, err := wharfCmd(testContext(t), env, strings.NewReader("carol-password\n"), "user", "add", "carol", "--password-stdin")
	is.NoErr(err)                                                                      // add works without --state-dir
	is.Equal(fileMode(t, filepath.Join(xdg, "wharf")), os.FileMode(0o700))             // using $XDG_STATE_HOME/wharf
	is.Equal(fileMode(t, filepath.Join(xdg, "wharf", "wharf.db")), os.FileMode(0o600)) // with its database
}

func TestUserErrors(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	dir := stateDir(t)
	_, _, err := wharfCmd(ctx, nil, strings.NewReader("bob-password\n"), "user", "add", "bob", "--password-stdin", "--state-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	const pw = "good-password\n"

	for _, tc := range []struct {
		name  string
		args  []string // after "user"; --state-dir is appended
		stdin io.Reader
		want  string
		usage bool // a mistake on the command line (exit 2), not a failure (exit 1)
	}{
		{"short password", []string{"add", "carol", "--password-stdin"}, strings.NewReader("short\n"), "at least 8 characters", false},
		{"too long password", []string{"add", "carol", "--password-stdin"}, strings.NewReader(strings.Repeat("x", 1025) + "\n"), "longer than 1024 bytes", false},
		{"empty stdin", []string{"add", "carol", "--password-stdin"}, strings.NewReader(""), "no password on standard input", false},
		{"bad name", []string{"add", "bad/name", "--password-stdin"}, strings.NewReader(pw), "user name may hold only", false},
		{"name starting with a dot", []string{"add", ".carol", "--password-stdin"}, strings.NewReader(pw), "must start with a letter or digit", false},
		{"add without NAME", []string{"add", "--password-stdin"}, strings.NewReader(pw), "user add: missing NAME", true},
		{"passwd without NAME", []string{"passwd", "--password-stdin"}, strings.NewReader(pw), "user passwd: missing NAME", true},
		{"remove without NAME", []string{"remove"}, nil, "user remove: missing NAME", true},
		{"extra argument after NAME", []string{"add", "carol", "extra", "--password-stdin"}, strings.NewReader(pw), `unexpected argument "extra"`, true},
		{"extra argument after flags", []string{"add", "--password-stdin", "carol", "extra"}, strings.NewReader(pw), `unexpected argument "extra"`, true},
		{"list with NAME", []string{"list", "bob"}, nil, `user list: unexpected argument "bob"`, true},
		{"unknown subcommand", []string{"rename", "bob"}, nil, `unknown subcommand "rename"`, true},
		{"passwd of an unknown user", []string{"passwd", "nobody", "--password-stdin"}, strings.NewReader(pw), `user "nobody" not found`, false},
		{"remove of an unknown user", []string{"remove", "nobody"}, nil, `user "nobody" not found`, false},
		{"no terminal: a reader", []string{"add", "carol"}, strings.NewReader(pw), "use --password-stdin", false},
		{"no terminal: /dev/null", []string{"passwd", "bob"}, devNull, "use --password-stdin", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, _, err := wharfCmd(ctx, nil, tc.stdin, append(append([]string{"user"}, tc.args...), "--state-dir", dir)...)
			is.True(err != nil)                             // refused
			is.True(strings.Contains(err.Error(), tc.want)) // with a clear message
			var ue usageError
			is.Equal(errors.As(err, &ue), tc.usage) // classified for the exit status
		})
	}

	t.Run("no subcommand", func(t *testing.T) {
		is := is.New(t)
		_, stderr, err := wharfCmd(ctx, nil, nil, "user")
		is.True(err != nil && strings.Contains(err.Error(), "missing subcommand")) // refused
		is.True(strings.Contains(stderr, "usage:"))                                // with the usage
	})

	is := is.New(t)
	stdout, _, err := wharfCmd(ctx, nil, nil, "user", "list", "--state-dir", dir)
	is.NoErr(err)                                // list works
	is.Equal(userNames(stdout), []string{"bob"}) // the refused commands changed nothing
}

// TestRefusedUserCommandsCreateNothing runs refused commands against a
// state directory that does not exist yet: none may create it.
func TestRefusedUserCommandsCreateNothing(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	dir := stateDir(t)
	for _, args := range [][]string{
		{"add", "carol"}, // no terminal and no --password-stdin
		{"add", "carol", "--password-stdin"},
		{"list"},
		{"passwd", "carol", "--password-stdin"},
		{"remove", "carol"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			is := is.New(t)
			_, _, err := wharfCmd(ctx, nil, strings.NewReader("short\n"), append(append([]string{"user"}, args...), "--state-dir", dir)...)
			is.True(err != nil) // refused
			_, err = os.Stat(dir)
			is.True(errors.Is(err, os.ErrNotExist)) // and nothing created
		})
	}
}
