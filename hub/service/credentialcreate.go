package service

import (
	"context"
	"log/slog"

	"github.com/google/uuid"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// Making credentials: generate and import keys, store tokens. Each checks
// its input with hub/credential's rules before the vault sees it, has the
// vault make or read the secret, then records the credential with its
// sealed secret in one transaction; nothing is kept of a refused request.
// Generate and import count against the caller's generate budget before
// anything else (a refusal then costs the Hub nothing).

// GenerateSSHKey makes an ed25519 key protected by req.Passphrase
// (hubGenerateSshCredential). The new key is locked: its passphrase was
// given to make it, not to use it.
func (h *Hub) GenerateSSHKey(ctx context.Context, who hub.Requester, req hub.NewSSHKey) (hub.CredentialView, error) {
	if err := h.attempt(credential.BucketGenerate, who); err != nil {
		return hub.CredentialView{}, err
	}
	c, err := newCredential(hub.CredentialSSH, req.Name, req.Capabilities)
	if err != nil {
		return hub.CredentialView{}, err
	}
	if err := credential.CheckNewPassphrase(req.Passphrase); err != nil {
		return hub.CredentialView{}, err
	}
	key, err := h.vault.GenerateSSH([]byte(req.Passphrase), "wharf:"+c.ID)
	if err != nil {
		return hub.CredentialView{}, vaultError(err, "SSH key could not be generated")
	}
	return h.addKey(ctx, c, key, false, "")
}

// ImportSSHKey reads an SSH private key (hubImportSshCredential). It is
// unlocked at once: the import carried whatever opens it.
func (h *Hub) ImportSSHKey(ctx context.Context, who hub.Requester, req hub.NewSSHKey) (hub.CredentialView, error) {
	if err := h.attempt(credential.BucketGenerate, who); err != nil {
		return hub.CredentialView{}, err
	}
	c, err := newCredential(hub.CredentialSSH, req.Name, req.Capabilities)
	if err != nil {
		return hub.CredentialView{}, err
	}
	if req.PrivateKey == "" {
		return hub.CredentialView{}, hub.Errorf(hub.Invalid, "privateKey must be a non-empty string")
	}
	if err := credential.CheckPassphrase(hub.CredentialSSH, req.Passphrase); err != nil {
		return hub.CredentialView{}, err
	}
	key, err := h.vault.ImportSSH([]byte(req.PrivateKey), []byte(req.Passphrase))
	if err != nil {
		return hub.CredentialView{}, vaultError(err, "SSH key could not be imported")
	}
	return h.addKey(ctx, c, key, true, req.Passphrase)
}

// GenerateOpenPGPKey makes an OpenPGP signing key for req.UserID
// protected by req.Passphrase (hubGenerateOpenPgpCredential); it is
// locked, as a generated SSH key is.
func (h *Hub) GenerateOpenPGPKey(ctx context.Context, who hub.Requester, req hub.NewOpenPGPKey) (hub.CredentialView, error) {
	if err := h.attempt(credential.BucketGenerate, who); err != nil {
		return hub.CredentialView{}, err
	}
	c, err := newCredential(hub.CredentialOpenPGP, req.Name, []hub.Capability{hub.CapOpenPGPSigning})
	if err != nil {
		return hub.CredentialView{}, err
	}
	userID, err := credential.NormalizeUserID(req.UserID)
	if err != nil {
		return hub.CredentialView{}, err
	}
	if err := credential.CheckNewPassphrase(req.Passphrase); err != nil {
		return hub.CredentialView{}, err
	}
	key, err := h.vault.GenerateOpenPGP(userID, []byte(req.Passphrase))
	if err != nil {
		return hub.CredentialView{}, vaultError(err, "OpenPGP key could not be generated")
	}
	return h.addKey(ctx, c, key, false, "")
}

// ImportOpenPGPKey reads an armored OpenPGP secret key
// (hubImportOpenPgpCredential). It keeps its own protection: a protected
// key stays locked until unlocked with its passphrase, an unprotected
// one is unlocked at once.
func (h *Hub) ImportOpenPGPKey(ctx context.Context, who hub.Requester, req hub.NewOpenPGPKey) (hub.CredentialView, error) {
	if err := h.attempt(credential.BucketGenerate, who); err != nil {
		return hub.CredentialView{}, err
	}
	c, err := newCredential(hub.CredentialOpenPGP, req.Name, []hub.Capability{hub.CapOpenPGPSigning})
	if err != nil {
		return hub.CredentialView{}, err
	}
	if req.PrivateKey == "" {
		return hub.CredentialView{}, hub.Errorf(hub.Invalid, "privateKey must be a non-empty string")
	}
	key, err := h.vault.ImportOpenPGP([]byte(req.PrivateKey))
	if err != nil {
		return hub.CredentialView{}, vaultError(err, "OpenPGP key could not be imported")
	}
	return h.addKey(ctx, c, key, true, "")
}

// CreateToken stores a token for a Git host (hubCreateTokenCredential);
// it is sealed with the Hub's key and never shown again.
func (h *Hub) CreateToken(ctx context.Context, req hub.NewToken) (hub.CredentialView, error) {
	c, err := newCredential(hub.CredentialToken, req.Name, req.Capabilities)
	if err != nil {
		return hub.CredentialView{}, err
	}
	if c.Host, err = credential.NormalizeHost(req.Host); err != nil {
		return hub.CredentialView{}, err
	}
	if err := credential.CheckUsername(req.Username); err != nil {
		return hub.CredentialView{}, err
	}
	if err := credential.CheckToken(req.Token); err != nil {
		return hub.CredentialView{}, err
	}
	c.Username = req.Username
	sealed, err := h.vault.SealToken([]byte(req.Token))
	if err != nil {
		return hub.CredentialView{}, vaultError(err, "token could not be stored")
	}
	c.CreatedAt = h.clock.Now().UTC()
	return h.record(ctx, c, sealed)
}

// newCredential checks what every new credential names: its name and its
// capabilities for type t; it mints its id.
func newCredential(t hub.CredentialType, name string, caps []hub.Capability) (hub.Credential, error) {
	name, err := credential.NormalizeName(name)
	if err != nil {
		return hub.Credential{}, err
	}
	caps, err = credential.NormalizeCapabilities(t, caps)
	if err != nil {
		return hub.Credential{}, err
	}
	return hub.Credential{ID: uuid.NewString(), Name: name, Type: t, Capabilities: caps, Enabled: true}, nil
}

// addKey records the key the vault made or read and, when its state
// after creation is unlocked (credential.Created), unlocks it with
// passphrase. An unlock that fails then leaves the key recorded and
// locked (its readiness says so), which the owner can retry.
func (h *Hub) addKey(ctx context.Context, c hub.Credential, key hub.NewKey, imported bool, passphrase string) (hub.CredentialView, error) {
	c.PublicKey, c.Fingerprint, c.Protected = key.PublicKey, key.Fingerprint, key.Protected
	c.CreatedAt = h.clock.Now().UTC()
	unlock, err := h.credLocks.Lock(ctx, c.ID)
	if err != nil {
		return hub.CredentialView{}, hub.Wrap(hub.Unavailable, err, "request cancelled")
	}
	defer unlock()
	if _, err := h.record(ctx, c, key.Sealed); err != nil {
		return hub.CredentialView{}, err
	}
	if credential.Created(c, imported).Unlocked {
		if err := h.unlockKey(c.ID, c.Type, key.Sealed, []byte(passphrase)); err != nil {
			h.log.LogAttrs(ctx, slog.LevelWarn, "a new key could not be unlocked", slog.String("credential", c.ID), slog.String("why", hub.MessageOf(err)))
		}
	}
	return h.Credential(ctx, c.ID)
}

// record commits c with its sealed secret. A fingerprint another key has
// is the contract's 400 (credential.DuplicateKey).
func (h *Hub) record(ctx context.Context, c hub.Credential, sealed []byte) (hub.CredentialView, error) {
	err := h.commit(ctx, func(tx *writes) error { return tx.CreateCredential(c, sealed) })
	switch {
	case hub.KindOf(err) == hub.Conflict && c.Fingerprint != "":
		return hub.CredentialView{}, credential.DuplicateKey(c.Type)
	case err != nil:
		return hub.CredentialView{}, hub.Wrap(hub.Internal, err, "credential could not be stored")
	}
	return h.Credential(ctx, c.ID)
}

// attempt counts one attempt of a rate-limited operation by who.
func (h *Hub) attempt(b credential.Bucket, who hub.Requester) error {
	return h.credLimits.Attempt(b, who.User, who.Client, h.clock.Now())
}

// vaultError keeps the vault's refusals (Invalid: what is wrong with the
// input, never quoting it) and says what failed otherwise.
func vaultError(err error, what string) error {
	if err == nil || hub.KindOf(err) == hub.Invalid || hub.KindOf(err) == hub.Unavailable {
		return err
	}
	return hub.Wrap(hub.Internal, err, what)
}
