package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestRun runs the example, twice on one directory (the second run finds
// its user), so the documentation cannot rot.
func TestRun(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	is.NoErr(os.Chmod(dir, 0o700)) // a state directory is private
	for range 2 {
		var out bytes.Buffer
		is.NoErr(run(ctx, dir, &out)) // the example runs cleanly
		got := out.String()
		is.True(strings.HasPrefix(got, "serving on http://127.0.0.1:"))                    // it serves on loopback
		is.True(strings.Contains(got, "GET /hello: hello from the host program\n"))        // its own route answers
		is.True(strings.Contains(got, "logged in as demo\n"))                              // the Hub API logs in
		is.True(strings.Contains(got, `registered hello: {"id":"hello","running":false}`)) // registers a workspace
		is.True(strings.Contains(got, "Hub API 11, workspace API 24, 1 workspaces\n"))     // and reads the Hub state
		is.True(!strings.Contains(got, "git ran 0 times"))                                 // through the swapped git adapter
	}
}

func TestRunTempDir(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	is.NoErr(run(ctx, "", &out))                                 // without -dir it uses a temporary directory
	is.True(strings.Contains(out.String(), "logged in as demo")) // and works the same
}
