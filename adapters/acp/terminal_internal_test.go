package acp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/matryer/is"
)

func TestTerminalsRunInTheWorkspace(t *testing.T) {
	is := is.New(t)
	root := t.TempDir()
	is.NoErr(os.Mkdir(filepath.Join(root, "sub"), 0o755))
	c := testConn(t, &Runtime{opts: Options{Env: []string{"PATH=" + os.Getenv("PATH"), "SESSION_ONLY=yes"}}}, root, nil)
	ts := c.terms
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	sub := filepath.Join(root, "sub")
	id, err := ts.create(acpsdk.CreateTerminalRequest{Command: "sh",
		Args: []string{"-c", `pwd; echo "$SESSION_ONLY $EXTRA ${HOME:-nohome}"; exit 3`}, Cwd: &sub,
		Env: []acpsdk.EnvVariable{{Name: "EXTRA", Value: "asked"}}})
	is.NoErr(err) // started
	exit, err := ts.wait(ctx, id)
	is.NoErr(err)                                        // it ends
	is.True(exit.ExitCode != nil && *exit.ExitCode == 3) // with its status
	out, err := ts.output(id)
	is.NoErr(err)
	realSub, _ := filepath.EvalSymlinks(sub)
	is.Equal(out.Output, realSub+"\nyes asked nohome\n") // in the folder asked for, with the session's environment only
	is.True(out.ExitStatus != nil)                       // the exit is reported with the output
	is.NoErr(ts.release(id))
	_, err = ts.output(id)
	is.True(err != nil) // released terminals are gone

	outside := t.TempDir()
	_, err = ts.create(acpsdk.CreateTerminalRequest{Command: "true", Cwd: &outside})
	is.True(err != nil) // never outside the workspace

	limit := 10
	id, err = ts.create(acpsdk.CreateTerminalRequest{Command: "sh", Args: []string{"-c", "printf 'aaaaaaaaaabbbbbbbbbb'"}, OutputByteLimit: &limit})
	is.NoErr(err)
	_, err = ts.wait(ctx, id)
	is.NoErr(err)
	out, _ = ts.output(id)
	is.Equal(out.Output, strings.Repeat("b", 10)) // the output keeps its end
	is.True(out.Truncated)                        // and says it was cut
}

// A command that leaves a background child holding its output is reported
// as exited when it exits, and the child goes with its group.
func TestTerminalEndsWithItsCommand(t *testing.T) {
	is := is.New(t)
	c := testConn(t, testRuntime(), t.TempDir(), nil)
	ts := c.terms
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	id, err := ts.create(acpsdk.CreateTerminalRequest{Command: "sh", Args: []string{"-c", "sleep 60 & echo started"}})
	is.NoErr(err) // started
	exit, err := ts.wait(ctx, id)
	is.NoErr(err)                                        // it ends, though its child holds the output
	is.True(exit.ExitCode != nil && *exit.ExitCode == 0) // with its status
	out, err := ts.output(id)
	is.NoErr(err)
	is.Equal(out.Output, "started\n") // and its output
}
