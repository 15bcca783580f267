package credential

import (
	"github.com/wharfhub/wharf/hub"
)

// State is where a credential stands: enabled or disabled, and, for a key,
// locked or unlocked (its secret held in the Hub's memory, KeyVault). A
// token has no lock: its Unlocked is always false, and whether it can be
// used is whether it is enabled.
type State struct {
	Enabled, Unlocked bool
}

func (s State) String() string {
	e, u := "disabled", "locked"
	if s.Enabled {
		e = "enabled"
	}
	if s.Unlocked {
		u = "unlocked"
	}
	return e + ", " + u
}

var (
	errSSHDisabled     = hub.Errorf(hub.Conflict, "SSH credential is disabled")
	errOpenPGPDisabled = hub.Errorf(hub.Conflict, "OpenPGP credential is disabled")
	errSSHPassphrase   = hub.Errorf(hub.Invalid, "SSH private key passphrase is required")
)

// isKey reports whether c is a key (it can be locked), not a token.
func isKey(c hub.Credential) bool {
	return c.Type == hub.CredentialSSH || c.Type == hub.CredentialOpenPGP
}

// StateOf is c's state, given whether the vault holds its key.
func StateOf(c hub.Credential, unlocked bool) State {
	return State{Enabled: c.Enabled, Unlocked: unlocked && isKey(c)}
}

// Created is the state of a credential just made: enabled, and a key
// unlocked only when making it needed no passphrase the Hub does not keep.
// A generated key is locked (its passphrase was only given to make it);
// an imported SSH key is unlocked (the import carried its passphrase, if
// it has one); an imported OpenPGP key is unlocked unless it is protected
// (its import carries no passphrase); a token has no lock.
func Created(c hub.Credential, imported bool) State {
	switch {
	case !isKey(c) || !imported:
		return State{Enabled: true}
	case c.Type == hub.CredentialSSH:
		return State{Enabled: true, Unlocked: true}
	}
	return State{Enabled: true, Unlocked: !c.Protected}
}

// AtStart is c's state when the Hub starts: every key is locked, except
// that the Hub unlocks an enabled key it sealed itself (one without the
// owner's passphrase), so an unprotected key works as it did before the
// restart.
func AtStart(c hub.Credential) State {
	return State{Enabled: c.Enabled, Unlocked: c.Enabled && isKey(c) && !c.Protected}
}

// Enable moves c to enabled. An unprotected key is unlocked (the Hub
// needs no passphrase to load it, and enabling clears an explicit lock);
// a protected key stays as it was, so one that disable locked still needs
// an unlock. Enabling an enabled credential changes nothing else.
func Enable(c hub.Credential, s State) State {
	return State{Enabled: true, Unlocked: isKey(c) && (s.Unlocked || !c.Protected)}
}

// Disable moves c to disabled and locked: nothing can use it until it is
// enabled (and, if protected, unlocked) again. Sessions that received it
// in their environment must be stopped first (RevokeStopsSessions).
func Disable(State) State {
	return State{}
}

// Lock moves a key to locked, enabled or not: it leaves the Hub's memory
// and every session's agent at once, and stays locked (an unprotected key
// too) until unlock, enable or a Hub restart. Locking a locked key
// succeeds. A token cannot be locked: Invalid "token credentials cannot be
// locked or unlocked".
func Lock(c hub.Credential, s State) (State, error) {
	if !isKey(c) {
		return s, errTokenNotUnlocked
	}
	return State{Enabled: s.Enabled}, nil
}

// Unlock moves an enabled key to unlocked with passphrase, refusing, in
// this order: a token (Invalid "token credentials cannot be locked or
// unlocked"); a passphrase CheckPassphrase refuses; an empty passphrase
// for a protected SSH key (Invalid "SSH private key passphrase is
// required"); a disabled key (Conflict "SSH credential is disabled",
// "OpenPGP credential is disabled"). Whether the passphrase is right is
// the vault's to say (Invalid, and the state stays as it was). Unlocking
// an unlocked key succeeds.
func Unlock(c hub.Credential, s State, passphrase string) (State, error) {
	if err := CheckPassphrase(c.Type, passphrase); err != nil {
		return s, err
	}
	if c.Type == hub.CredentialSSH && c.Protected && passphrase == "" {
		return s, errSSHPassphrase
	}
	if !s.Enabled {
		if c.Type == hub.CredentialSSH {
			return s, errSSHDisabled
		}
		return s, errOpenPGPDisabled
	}
	return State{Enabled: true, Unlocked: true}, nil
}

// CheckTest says whether c may be tested: a disabled OpenPGP key may not
// (Conflict "OpenPGP credential is disabled": its test signs); a disabled
// SSH key or token is tested and reports itself unavailable
// (TestResults).
func CheckTest(c hub.Credential) error {
	if c.Type == hub.CredentialOpenPGP && !c.Enabled {
		return errOpenPGPDisabled
	}
	return nil
}

// RevokeStopsSessions reports whether disabling or deleting c must first
// stop the running sessions that received it: a token for a provider's
// CLI, whose value sits in the session's environment where nothing can
// take it back. Keys leave the sessions' agents at once and HTTPS tokens
// are checked at each use, so neither needs a stop.
func RevokeStopsSessions(c hub.Credential) bool {
	return c.Type == hub.CredentialToken && (Has(c, hub.CapGitHubCLI) || Has(c, hub.CapGitLabCLI))
}
