package sshhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path"

	"github.com/wharfhub/wharf/hub"
)

// reserve claims the local socket for a new session of id until release.
func (h *Host) reserve(sock, id string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch other, ok := h.sessions[sock]; {
	case !ok:
		h.sessions[sock] = id
		return nil
	case other == id:
		return hub.Errorf(hub.Conflict, "the session of this workspace is already running")
	default:
		return hub.Errorf(hub.Internal, "session socket name collision; try again after stopping another session")
	}
}

func (h *Host) release(sock string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.sessions, sock)
}

// dataName is the name of workspace id's data folder on the host: 16 hex
// digits of the SHA-256 of the id.
func dataName(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// RemoveWorkspaceData removes the data folder of workspace id on the
// host, and everything in it (rm -rf removes links rather than follow
// them). A session of id still running is a Conflict.
func (h *Host) RemoveWorkspaceData(ctx context.Context, id string) error {
	h.mu.Lock()
	running := false
	for _, other := range h.sessions {
		running = running || other == id
	}
	h.mu.Unlock()
	if running {
		return hub.Errorf(hub.Conflict, "the session of this workspace is running")
	}
	r, err := h.connect(ctx)
	if err != nil {
		return err
	}
	var stderr boundedBuffer
	cmd := h.remoteCommand(ctx, `rm -rf -- "$1"`, path.Join(r.root, "data", dataName(id)))
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return h.remoteFailure(ctx, err, stderr.String(), "workspace data could not be removed")
	}
	return nil
}
