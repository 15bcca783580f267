package service

import (
	"context"
	"errors"
	"log/slog"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// The operations that move a credential between its states
// (hub/credential's state.go has the table): enable, disable, lock,
// unlock, test and delete. Each holds the credential's lock, so what the
// vault holds of it changes in one order; what reaches sessions follows
// at once (a lock or a disable leaves every agent before the operation
// answers; the commit path re-offers the agents).

// UnlockCredential opens a key with passphrase and holds it in the Hub's
// memory until lock, disable, delete or a Hub restart
// (hubUnlockCredential). It counts against the caller's passphrase
// budget before anything else.
func (h *Hub) UnlockCredential(ctx context.Context, who hub.Requester, id, passphrase string) (hub.CredentialView, error) {
	if err := h.attempt(credential.BucketPassphrase, who); err != nil {
		return hub.CredentialView{}, err
	}
	return h.withCredential(ctx, id, func(c hub.Credential) error {
		if _, err := credential.Unlock(c, h.stateOf(c), passphrase); err != nil {
			return err
		}
		sealed, err := h.secret(ctx, id)
		if err != nil {
			return err
		}
		if err := h.unlockKey(id, c.Type, sealed, []byte(passphrase)); err != nil {
			return vaultError(err, "the key could not be unlocked")
		}
		h.counters.credentialUnlocks.Add(1)
		return nil
	})
}

// LockCredential drops a key from the Hub's memory and so from every
// session's agent at once (hubLockCredential). A token cannot be locked.
func (h *Hub) LockCredential(ctx context.Context, id string) (hub.CredentialView, error) {
	return h.withCredential(ctx, id, func(c hub.Credential) error {
		if _, err := credential.Lock(c, h.stateOf(c)); err != nil {
			return err
		}
		h.lockKey(id)
		return nil
	})
}

// EnableCredential enables a credential (hubEnableCredential); an
// unprotected key is unlocked with it, a protected one stays as it was.
func (h *Hub) EnableCredential(ctx context.Context, id string) (hub.CredentialView, error) {
	return h.withCredential(ctx, id, func(c hub.Credential) error {
		next := credential.Enable(c, h.stateOf(c))
		if !c.Enabled {
			c.Enabled = true
			if err := h.commit(ctx, func(tx *writes) error { return tx.UpdateCredential(c) }); err != nil {
				return storeError(err, "credential could not be enabled")
			}
		}
		if next.Unlocked && !h.vault.Unlocked(id) {
			sealed, err := h.secret(ctx, id)
			if err != nil {
				return err
			}
			if err := h.unlockKey(id, c.Type, sealed, nil); err != nil {
				h.log.LogAttrs(ctx, slog.LevelWarn, "an enabled key could not be unlocked", slog.String("credential", id), slog.String("why", hub.MessageOf(err)))
			}
		}
		return nil
	})
}

// DisableCredential disables a credential and locks it
// (hubDisableCredential). A provider-CLI token's sessions are stopped
// first (revoke): its value sits in their environment.
func (h *Hub) DisableCredential(ctx context.Context, id string) (hub.CredentialView, error) {
	if err := credential.CheckID(id); err != nil {
		return hub.CredentialView{}, err
	}
	err := h.revoke(ctx, id, func(tx *writes, c hub.Credential) error {
		if !c.Enabled {
			return nil
		}
		c.Enabled = false
		return tx.UpdateCredential(c)
	})
	if err != nil {
		return hub.CredentialView{}, err
	}
	return h.Credential(ctx, id)
}

// DeleteCredential deletes a credential with its secret
// (hubDeleteCredential), after explicit confirmation; with unassign its
// assignments go with it (409 otherwise while it has any). A provider-CLI
// token's sessions are stopped first.
func (h *Hub) DeleteCredential(ctx context.Context, id string, confirm, unassign bool) error {
	if err := credential.CheckID(id); err != nil {
		return err
	}
	if !confirm {
		_, err := credential.Catalog{}.Delete(id, false, unassign)
		return err
	}
	if err := h.fence(fenceAssign); err != nil {
		return err
	}
	return h.revoke(ctx, id, func(tx *writes, c hub.Credential) error {
		cat, err := catalogIn(tx)
		if err != nil {
			return err
		}
		if _, err := cat.Delete(id, confirm, unassign); err != nil {
			return err
		}
		return tx.DeleteCredential(id)
	})
}

// TestCredential checks that a credential works, without contacting any
// host (hubTestCredential): an SSH key is loaded, a token's value opens,
// an OpenPGP key signs a fixed challenge that then verifies with its
// public key. It counts against the passphrase budget.
func (h *Hub) TestCredential(ctx context.Context, who hub.Requester, id string) ([]hub.ReadinessResult, error) {
	if err := h.attempt(credential.BucketPassphrase, who); err != nil {
		return nil, err
	}
	var out []hub.ReadinessResult
	_, err := h.withCredential(ctx, id, func(c hub.Credential) error {
		if err := credential.CheckTest(c); err != nil {
			return err
		}
		var f credential.TestFacts
		switch c.Type {
		case hub.CredentialSSH:
			f.Unlocked = h.vault.Unlocked(id)
		case hub.CredentialToken:
			sealed, err := h.secret(ctx, id)
			if err != nil {
				return err
			}
			if token, err := h.vault.OpenToken(sealed); err == nil {
				clear(token)
				f.TokenOpens = true
			}
		case hub.CredentialOpenPGP:
			data := []byte(credential.TestChallenge)
			if sig, err := h.vault.SignOpenPGP(id, data); err == nil {
				f.Signature = credential.SignatureInvalid
				if h.vault.VerifyOpenPGP(c.PublicKey, data, sig) == nil {
					f.Signature = credential.SignatureVerified
				}
			}
		}
		out = credential.TestResults(c, f)
		return nil
	})
	return out, err
}

// unlockAtStart unlocks every enabled key the Hub sealed itself (no
// passphrase of the owner's protects it), as credential.AtStart says: the
// rest stay locked until their owner unlocks them. A key that will not
// open is logged and stays locked.
func (h *Hub) unlockAtStart(ctx context.Context) error {
	cat, _, _, err := h.catalog(ctx)
	if err != nil {
		return err
	}
	for _, c := range cat.Credentials {
		if !credential.AtStart(c).Unlocked {
			continue
		}
		sealed, err := h.secret(ctx, c.ID)
		if err == nil {
			err = h.unlockKey(c.ID, c.Type, sealed, nil)
		}
		if err != nil {
			h.log.LogAttrs(ctx, slog.LevelError, "a key could not be unlocked at start", slog.String("credential", c.ID), slog.String("why", hub.MessageOf(err)))
		}
	}
	return nil
}

// withCredential runs fn on credential id under its lock and answers the
// credential as it then is.
func (h *Hub) withCredential(ctx context.Context, id string, fn func(hub.Credential) error) (hub.CredentialView, error) {
	if err := credential.CheckID(id); err != nil {
		return hub.CredentialView{}, err
	}
	unlock, err := h.credLocks.Lock(ctx, id)
	if err != nil {
		return hub.CredentialView{}, hub.Wrap(hub.Unavailable, err, "request cancelled")
	}
	defer unlock()
	v, err := h.Credential(ctx, id)
	if err != nil {
		return hub.CredentialView{}, err
	}
	if err := fn(v.Credential); err != nil {
		return hub.CredentialView{}, err
	}
	return h.Credential(ctx, id)
}

// stateOf is c's state, as the vault holds it.
func (h *Hub) stateOf(c hub.Credential) credential.State {
	return credential.StateOf(c, h.vault.Unlocked(c.ID))
}

// secret reads credential id's sealed secret.
func (h *Hub) secret(ctx context.Context, id string) ([]byte, error) {
	var sealed []byte
	err := h.store.View(ctx, func(tx hub.Tx) error {
		var err error
		sealed, err = tx.CredentialSecret(id)
		return err
	})
	switch {
	case hub.KindOf(err) == hub.NotFound:
		return nil, unknownCredential(id)
	case err != nil:
		return nil, hub.Wrap(hub.Internal, err, "credential could not be read")
	}
	return sealed, nil
}

// catalogIn reads the catalog inside a transaction.
func catalogIn(tx interface {
	Credentials() ([]hub.Credential, error)
	CredentialAssignments() ([]hub.CredentialAssignment, error)
}) (credential.Catalog, error) {
	var cat credential.Catalog
	var err error
	if cat.Credentials, err = tx.Credentials(); err != nil {
		return cat, err
	}
	cat.Assignments, err = tx.CredentialAssignments()
	return cat, err
}

// storeError keeps the rules' refusals and says what failed otherwise.
func storeError(err error, what string) error {
	var e *hub.Error
	if errors.As(err, &e) && e.Kind != hub.Internal {
		return err
	}
	return hub.Wrap(hub.Internal, err, what)
}
