package service

import (
	"context"
	"crypto/sha256"
	"slices"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// The consequences of the credentials family's writes (writes.go): a
// credential made, changed or deleted, an assignment put or removed, a
// tool's override set. Each brings the cached catalog up to date and may
// show in the state (a workspace's credentialAssignments and
// credentialRestartRequired); each then has the running sessions' agents
// offer exactly their workspace's assigned, enabled SSH keys, so an
// unassignment, a disable or a delete reaches the live sockets before the
// operation answers.

// credentialSaved is a credential created (with its sealed secret's
// digest, for a token) or updated.
type credentialSaved struct {
	c      hub.Credential
	digest *[sha256.Size]byte
}

func (c credentialSaved) apply(h *Hub) (took, shown bool) {
	h.cred.update(func(cat credential.Catalog) credential.Catalog {
		cat.Credentials = replaceCredential(cat.Credentials, c.c)
		return cat
	})
	if c.digest != nil {
		h.cred.putDigest(c.c.ID, c.digest)
	}
	return true, true
}

func (credentialSaved) publish(_ context.Context, h *Hub, _ *publication) { h.reoffer() }

// credentialDeleted is a credential gone, with its secret and its
// assignments.
type credentialDeleted struct{ id string }

func (c credentialDeleted) apply(h *Hub) (took, shown bool) {
	h.cred.update(func(cat credential.Catalog) credential.Catalog {
		cat.Credentials = slices.DeleteFunc(slices.Clone(cat.Credentials), func(x hub.Credential) bool { return x.ID == c.id })
		cat.Assignments = slices.DeleteFunc(slices.Clone(cat.Assignments), func(a hub.CredentialAssignment) bool { return a.CredentialID == c.id })
		return cat
	})
	h.cred.putDigest(c.id, nil)
	h.uses.forget(c.id)
	return true, true
}

func (credentialDeleted) publish(_ context.Context, h *Hub, _ *publication) { h.reoffer() }

// assignmentPut is an assignment recorded, replacing the one that held
// its place.
type assignmentPut struct{ a hub.CredentialAssignment }

func (c assignmentPut) apply(h *Hub) (took, shown bool) {
	h.cred.update(func(cat credential.Catalog) credential.Catalog {
		as := slices.DeleteFunc(slices.Clone(cat.Assignments), func(x hub.CredentialAssignment) bool {
			return x.WorkspaceID == c.a.WorkspaceID && x.Role == c.a.Role && x.Host == c.a.Host
		})
		as = append(as, c.a)
		credential.SortAssignments(as)
		cat.Assignments = as
		return cat
	})
	return true, true
}

func (assignmentPut) publish(_ context.Context, h *Hub, _ *publication) { h.reoffer() }

// assignmentRemoved is an assignment gone.
type assignmentRemoved struct{ a hub.CredentialAssignment }

func (c assignmentRemoved) apply(h *Hub) (took, shown bool) {
	h.cred.update(func(cat credential.Catalog) credential.Catalog {
		cat.Assignments = slices.DeleteFunc(slices.Clone(cat.Assignments), func(x hub.CredentialAssignment) bool { return x == c.a })
		return cat
	})
	return true, true
}

func (assignmentRemoved) publish(_ context.Context, h *Hub, _ *publication) { h.reoffer() }

// workspaceAssignmentsGone is a workspace's assignments deleted with it
// (the store deletes them with the workspace).
type workspaceAssignmentsGone struct{ id string }

func (c workspaceAssignmentsGone) apply(h *Hub) (took, shown bool) {
	h.cred.update(func(cat credential.Catalog) credential.Catalog {
		cat.Assignments = slices.DeleteFunc(slices.Clone(cat.Assignments), func(a hub.CredentialAssignment) bool { return a.WorkspaceID == c.id })
		return cat
	})
	return true, true
}

func (workspaceAssignmentsGone) publish(context.Context, *Hub, *publication) {}

// toolOverrideSaved is a tool's override path set, or cleared ("").
type toolOverrideSaved struct {
	tool hub.CredentialToolName
	path string
}

func (c toolOverrideSaved) apply(h *Hub) (took, shown bool) {
	h.cred.putOverride(c.tool, c.path)
	return true, true
}

func (toolOverrideSaved) publish(context.Context, *Hub, *publication) {}

// toolPathsSeen is a probe that found tools at other paths than before:
// the running sessions that use them may need a restart.
type toolPathsSeen struct{}

func (toolPathsSeen) apply(*Hub) (took, shown bool)               { return true, true }
func (toolPathsSeen) publish(context.Context, *Hub, *publication) {}

// putDigest records (or, with nil, forgets) a token's digest; commitMu
// is held.
func (c *credentialCache) putDigest(id string, d *[sha256.Size]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.loaded {
		return
	}
	digests := make(map[string][sha256.Size]byte, len(c.digests)+1)
	for k, v := range c.digests {
		if k != id {
			digests[k] = v
		}
	}
	if d != nil {
		digests[id] = *d
	}
	c.digests = digests
}

// putOverride records a tool's override; commitMu is held.
func (c *credentialCache) putOverride(tool hub.CredentialToolName, path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.loaded {
		c.gen++
		return
	}
	o := make(map[hub.CredentialToolName]string, len(c.overrides)+1)
	for k, v := range c.overrides {
		if k != tool {
			o[k] = v
		}
	}
	if path != "" {
		o[tool] = path
	}
	c.overrides = o
}
