package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"path/filepath"

	"github.com/wharfhub/wharf/adapters/internal/credenv"
	"github.com/wharfhub/wharf/hub"
)

// A session's credentials are projected by adapters/internal/credenv
// (its package doc says what a child gets and why), into a runtime
// folder beside the session's socket; the projection is closed when the
// child is reaped.

// CredentialsEnv names the variable that holds a session's runtime
// folder, for `wharf git-credential`, `wharf gpg` and the session itself.
const CredentialsEnv = credenv.CredentialsEnv

// MaxSignBytes bounds what one signature covers (credenv.MaxSignBytes).
const MaxSignBytes = credenv.MaxSignBytes

// MaxCredentialInput bounds what `wharf git-credential` reads of git's
// request (credenv.MaxCredentialInput).
const MaxCredentialInput = credenv.MaxCredentialInput

// RunGitCredential is `wharf git-credential <action>`, the credential
// helper git runs in a workspace session or a clone: see
// credenv.RunGitCredential.
func RunGitCredential(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	return credenv.RunGitCredential(ctx, args, stdin, stdout, stderr, getenv)
}

// projectionDir is the runtime folder of workspace id's session: the
// socket's hash, without ".sock", beside it in the private RuntimeDir.
func (b *Backend) projectionDir(id string) string {
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(b.opts.RuntimeDir, hex.EncodeToString(sum[:6]))
}

// project builds the projection of spec into a fresh runtime folder. A
// folder left by a Hub that died is this workspace's, and stale: reserve
// has made sure no session of it runs here.
func (b *Backend) project(ctx context.Context, spec hub.WorkspaceSessionSpec, base []string) (*credenv.Projection, error) {
	return credenv.Build(ctx, credenv.Options{Dir: b.projectionDir(spec.WorkspaceID), Credentials: spec.Credentials,
		Command: b.opts.Command, Base: base, Log: b.log.With("workspace", spec.WorkspaceID)})
}
