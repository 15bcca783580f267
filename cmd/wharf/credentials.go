package main

import (
	"context"
	"fmt"
	"io"

	"github.com/wharfhub/wharf/adapters/local"
)

// The two commands a workspace session's (and a clone's) git runs, named
// in the git config projected into each (adapters/internal/credenv):
// internal, so the usage text does not list them.
//
//	wharf git-credential get|store|erase   git's credential helper
//	wharf gpg <gpg's arguments>           git's OpenPGP signing program
//
// Both ask the Hub over the session's credential socket, which
// local.CredentialsEnv names; the logic is adapters/local's.

// gitCredentialCmd runs `wharf git-credential`.
func gitCredentialCmd(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	return local.RunGitCredential(ctx, args, stdin, stdout, stderr, getenv)
}

// gpgCmd runs `wharf gpg`, whose exit status is gpg's (0, 1 or 2): git
// reads it with the status lines.
func gpgCmd(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if code := local.RunGPG(ctx, args, stdin, stdout, stderr, getenv); code != 0 {
		return exitStatus(code)
	}
	return nil
}

// exitStatus makes wharf exit with that status and print nothing more:
// the command has said what it had to.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
