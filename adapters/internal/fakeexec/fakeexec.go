// Package fakeexec writes executables for tests: shell scripts standing
// for git, ssh, gpg or an agent.
//
// A script is written by a child process (cp), never by the test
// process itself. A file this process holds open for writing can be
// inherited, for an instant, by a fork of a parallel test, and executing
// it then fails with "text file busy" (ETXTBSY); under load that made
// tests fail with an error unrelated to what they test.
package fakeexec

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Script writes an executable shell script running body at path (its
// folder must exist) and returns path.
func Script(t testing.TB, path, body string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(src, []byte("#!/bin/sh\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", src, path).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
