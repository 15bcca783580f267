package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// WorkspaceView is a workspace as clients see it (HubWorkspace): the record
// plus what is true of it now.
type WorkspaceView struct {
	Workspace
	Running bool
	// CredentialRestartRequired is true while running when assignment
	// changes need a restart before the session's credentials are current.
	CredentialRestartRequired bool
	// Authentication and Signing hold the public names of the assigned
	// credentials, deduplicated, in assignment order; never nil.
	Authentication, Signing []string
	// WorkspaceAPIRevision is the revision the session speaks: the running
	// child's own, else the revision a child of this Hub would speak.
	WorkspaceAPIRevision int
	// Shells are the running session's terminals; nil when stopped or when
	// the child did not answer in time.
	Shells []Shell
	// RepositoryID identifies the Git repository holding the folder (shared
	// by a main checkout and its linked worktrees); Branch is its checked-out
	// branch. Both are empty when the folder is in no repository or git
	// could not tell.
	RepositoryID, Branch string
	// Missing is true when no directory is at Path any more.
	Missing bool
}

// repositoryID derives a repository's public identity from its common Git
// directory: stable while the repository stays where it is, and revealing
// nothing about the path.
func repositoryID(commonDir string) string {
	sum := sha256.Sum256([]byte(commonDir))
	return hex.EncodeToString(sum[:8])
}

// mintID returns a new workspace id for a folder: its readable base, with
// -2, -3, ... appended when an id was ever used, so an id never names two
// folders over the workspace registry's life.
func mintID(tx Tx, dir string) (string, error) {
	base := idBase(dir)
	for n := 1; ; n++ {
		id := base
		if n > 1 {
			id = base + "-" + strconv.Itoa(n)
		}
		used, err := tx.WorkspaceIDUsed(id)
		if err != nil {
			return "", err
		}
		if !used {
			return id, nil
		}
	}
}

// workspacesAtOrBelow returns the registered workspaces whose folders are
// root or inside it, in registration order.
func workspacesAtOrBelow(tx Tx, root string) ([]Workspace, error) {
	all, err := tx.Workspaces()
	if err != nil {
		return nil, err
	}
	var ws []Workspace
	for _, w := range all {
		if atOrBelow(w.Path, root) {
			ws = append(ws, w)
		}
	}
	return ws, nil
}

// workspaceAt returns the workspace registered exactly at p, if any.
func workspaceAt(tx Tx, p string) (Workspace, bool, error) {
	all, err := tx.Workspaces()
	if err != nil {
		return Workspace{}, false, err
	}
	for _, w := range all {
		if w.Path == p {
			return w, true, nil
		}
	}
	return Workspace{}, false, nil
}
