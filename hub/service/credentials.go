package service

import (
	"context"
	"crypto/sha256"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// The credentials family in the service: what the Hub keeps in memory of
// the catalog, and the reads. The rules are package hub/credential's; the
// secrets are the KeyVault's; every mutation goes through the commit path
// (credentialwrites.go, changes_credential.go), which keeps this cache
// current as it keeps the registry.
//
// Lock order (hub.go): workspace locks (sorted), then credential locks
// (credLocks, sorted), then commitMu, then cred.mu. A credential lock
// serializes what changes one credential's secret in the vault — unlock,
// lock, enable, disable, delete — so an unlock can never land after a
// delete or a disable.

// credentialCache is the catalog as the store holds it, read once and
// then kept up to date by the commit path; a failed commit has it read
// again (unsure).
type credentialCache struct {
	mu     sync.Mutex
	loaded bool
	gen    uint64
	// cat's slices are replaced on change, never modified in place.
	cat credential.Catalog
	// digests are the SHA-256 digests of each token's sealed value, by
	// credential id (credential.Projection).
	digests map[string][sha256.Size]byte
	// overrides are the tools' override paths.
	overrides map[hub.CredentialToolName]string

	// listRev advances with every change a list may show: of the catalog
	// (update, unsure) and of what the vault holds (unlockKey, lockKey);
	// list is the snapshot of the revision it was built at.
	listRev atomic.Uint64
	list    atomic.Pointer[credentialListSnap]
}

type credentialListSnap struct {
	rev  uint64
	list *hub.CredentialList
}

// catalog returns the catalog, the token digests and the tool overrides,
// reading them from the store the first time (and after a failed commit).
// The values are shared: callers must not modify them.
func (h *Hub) catalog(ctx context.Context) (credential.Catalog, map[string][sha256.Size]byte, map[hub.CredentialToolName]string, error) {
	c := &h.cred
	c.mu.Lock()
	if c.loaded {
		defer c.mu.Unlock()
		return c.cat, c.digests, c.overrides, nil
	}
	gen := c.gen
	c.mu.Unlock()
	var cat credential.Catalog
	digests := map[string][sha256.Size]byte{}
	var overrides map[hub.CredentialToolName]string
	err := h.store.View(ctx, func(tx hub.Tx) error {
		var err error
		if cat.Credentials, err = tx.Credentials(); err != nil {
			return err
		}
		if cat.Assignments, err = tx.CredentialAssignments(); err != nil {
			return err
		}
		for _, cr := range cat.Credentials {
			if cr.Type != hub.CredentialToken {
				continue
			}
			sealed, err := tx.CredentialSecret(cr.ID)
			if err != nil {
				return err
			}
			digests[cr.ID] = sha256.Sum256(sealed)
		}
		overrides, err = tx.CredentialToolOverrides()
		return err
	})
	if err != nil {
		return credential.Catalog{}, nil, nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		c.cat, c.digests, c.overrides, c.loaded = cat, digests, overrides, true
	}
	return cat, digests, overrides, nil
}

// unsure has the catalog read again: a commit failed, and the store may
// have applied it anyway.
func (c *credentialCache) unsure() {
	c.mu.Lock()
	c.loaded = false
	c.gen++
	c.mu.Unlock()
	c.listRev.Add(1)
}

// update applies a committed change to the cached catalog with fn, which
// returns the new value; when the cache is not loaded, the next read
// tells. commitMu is held.
func (c *credentialCache) update(fn func(credential.Catalog) credential.Catalog) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.listRev.Add(1)
	if !c.loaded {
		c.gen++
		return
	}
	c.cat = fn(c.cat)
}

// Credentials lists every credential, in creation order, with its
// assignments and readiness (hubListCredentials): a snapshot shared by
// every reader until something it shows changes. Reading changes
// nothing: readiness says whether the vault holds a key, it never loads
// one.
func (h *Hub) Credentials(ctx context.Context) (*hub.CredentialList, error) {
	rev := h.cred.listRev.Load()
	if s := h.cred.list.Load(); s != nil && s.rev == rev {
		return s.list, nil
	}
	cat, _, _, err := h.catalog(ctx)
	if err != nil {
		return nil, hub.Wrap(hub.Internal, err, "credentials could not be read")
	}
	out := &hub.CredentialList{Credentials: make([]hub.CredentialView, len(cat.Credentials))}
	for i, c := range cat.Credentials {
		out.Credentials[i] = h.credentialView(cat, c)
	}
	// Kept only if nothing changed while it was built: a change bumps
	// the revision first, so the next reader builds anew.
	h.cred.list.Store(&credentialListSnap{rev: rev, list: out})
	return out, nil
}

// unlockKey and lockKey change what the vault holds of credential id, and
// so what a list shows.
func (h *Hub) unlockKey(id string, t hub.CredentialType, sealed, passphrase []byte) error {
	defer h.cred.listRev.Add(1)
	return h.vault.Unlock(id, t, sealed, passphrase)
}

func (h *Hub) lockKey(id string) {
	defer h.cred.listRev.Add(1)
	h.vault.Lock(id)
}

// credentialView describes c as it is now. A readiness the vault cannot
// answer for one credential is that credential's alone (Undetermined);
// the vault's Unlocked is a memory lookup that cannot fail, so only an
// unknown type gets there.
func (h *Hub) credentialView(cat credential.Catalog, c hub.Credential) hub.CredentialView {
	return hub.CredentialView{
		Credential:  c,
		Assignments: cat.AssignmentsOf(c.ID),
		Readiness:   credential.Readiness(c, h.vault.Unlocked(c.ID)),
	}
}

// Credential returns one credential as Credentials shows it; NotFound
// "unknown credential: <id>".
func (h *Hub) Credential(ctx context.Context, id string) (hub.CredentialView, error) {
	if err := credential.CheckID(id); err != nil {
		return hub.CredentialView{}, err
	}
	cat, _, _, err := h.catalog(ctx)
	if err != nil {
		return hub.CredentialView{}, hub.Wrap(hub.Internal, err, "credentials could not be read")
	}
	c, ok := cat.Credential(id)
	if !ok {
		return hub.CredentialView{}, unknownCredential(id)
	}
	return h.credentialView(cat, c), nil
}

// CredentialPublicKey returns a key's public half
// (hubGetCredentialPublicKey): Invalid "token credentials do not have
// public keys" for a token.
func (h *Hub) CredentialPublicKey(ctx context.Context, id string) (hub.Credential, error) {
	v, err := h.Credential(ctx, id)
	if err != nil {
		return hub.Credential{}, err
	}
	if v.Type == hub.CredentialToken {
		return hub.Credential{}, hub.Errorf(hub.Invalid, "token credentials do not have public keys")
	}
	return v.Credential, nil
}

// workspaceCredentialNames answers a workspace's credentialAssignments
// from the cached catalog; empty when it cannot be read (the state answer
// never fails for it, and the next change reads it again).
func (h *Hub) workspaceCredentialNames(ctx context.Context, id string) (authentication, signing []string) {
	cat, _, _, err := h.catalog(ctx)
	if err != nil {
		return []string{}, []string{}
	}
	return cat.Names(id)
}

func unknownCredential(id string) error {
	return hub.Errorf(hub.NotFound, "unknown credential: %s", id)
}

// credentialIDs returns the ids of cs.
func credentialIDs(cs []hub.Credential) []string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}

// replaceCredential returns cs with c in place of the record with its
// id, or appended when there is none.
func replaceCredential(cs []hub.Credential, c hub.Credential) []hub.Credential {
	out := slices.Clone(cs)
	if i := slices.IndexFunc(out, func(x hub.Credential) bool { return x.ID == c.ID }); i >= 0 {
		out[i] = c
		return out
	}
	return append(out, c)
}
