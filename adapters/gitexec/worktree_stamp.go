package gitexec

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/wharfhub/wharf/hub"
)

// A linked tree's stamp is a file in its git directory, which git
// removes with the tree: the Hub's token for the tree, read and written
// here without following a link or blocking on a FIFO, so that whatever
// sits at the stamp's path (an agent can write in the git directory) is
// either the Hub's file or an error.

// stampName is the stamp's file in a tree's git directory.
const stampName = "wharf-checkout"

// maxStamp bounds a stamp: a token such as "wharf-checkout-<uuid>".
const maxStamp = 256

// ReadStamp reads the stamp in gitDir, per hub.WorktreeGit: "" when there
// is none; an error for anything but a regular file of at most maxStamp
// printable bytes.
func (r *Runner) ReadStamp(ctx context.Context, gitDir string) (string, error) {
	if err := checkStampDir(ctx, gitDir); err != nil {
		return "", err
	}
	b, err := readSmall(filepath.Join(gitDir, stampName), maxStamp)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", hub.Wrap(hub.Internal, err, "the worktree's stamp could not be read")
	case !validToken(string(b)):
		return "", hub.Wrap(hub.Internal, fmt.Errorf("%s holds no token", filepath.Join(gitDir, stampName)), "the worktree's stamp could not be read")
	}
	return string(b), nil
}

// WriteStamp writes token as the stamp in gitDir, per hub.WorktreeGit:
// created exclusively (anything at the path, a link or FIFO included, is
// fs.ErrExist), 0600, synced with its directory. A stamp that could not
// be written whole is removed.
func (r *Runner) WriteStamp(ctx context.Context, gitDir, token string) error {
	if err := checkStampDir(ctx, gitDir); err != nil {
		return err
	}
	if !validToken(token) {
		return hub.Errorf(hub.Invalid, "a stamp is one short printable token")
	}
	p := filepath.Join(gitDir, stampName)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return hub.Wrap(hub.Conflict, err, "the worktree is stamped already")
		}
		return hub.Wrap(hub.Internal, err, "the worktree's stamp could not be written")
	}
	_, err = f.WriteString(token)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(gitDir)
	}
	if err != nil {
		_ = os.Remove(p)
		return hub.Wrap(hub.Internal, err, "the worktree's stamp could not be written")
	}
	return nil
}

// checkStampDir refuses a relative git directory and an ended ctx.
func checkStampDir(ctx context.Context, gitDir string) error {
	if err := ctx.Err(); err != nil {
		return hub.Wrap(hub.Internal, err, "the stamp was cancelled")
	}
	if !filepath.IsAbs(gitDir) {
		return hub.Errorf(hub.Invalid, "a git directory must be absolute")
	}
	return nil
}

// validToken reports whether s is a token a stamp holds: 1 to maxStamp
// printable ASCII characters, no space.
func validToken(s string) bool {
	if s == "" || len(s) > maxStamp {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// syncDir makes a new entry of dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
