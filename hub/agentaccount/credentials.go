package agentaccount

import (
	"context"
	"slices"

	"github.com/wharfhub/wharf/hub"
)

// Logout removes a saved login through the agent, for every workspace.
// One the agent's status marks not removable (an environment key, a
// configuration file, a third-party cloud login) is refused before the
// agent is asked.
func (m *Manager) Logout(ctx context.Context, ref hub.AgentCredentialRef) (hub.AgentAccounts, error) {
	return m.credentialChange(ctx, ref, true, "logout")
}

// Activate makes a saved credential the active one of its target, where
// the agent declares the capability. The request names no target: the
// credential's own is used.
func (m *Manager) Activate(ctx context.Context, ref hub.AgentCredentialRef) (hub.AgentAccounts, error) {
	return m.credentialChange(ctx, ref, false, "activate")
}

// credentialChange runs logout (withTarget) or activate on a credential
// the agent's current status lists.
func (m *Manager) credentialChange(ctx context.Context, ref hub.AgentCredentialRef, logout bool, op string) (hub.AgentAccounts, error) {
	if err := CheckCredentialRef(ref, logout); err != nil {
		return hub.AgentAccounts{}, err
	}
	a, err := m.agentNamed(ref.Agent)
	if err != nil {
		return hub.AgentAccounts{}, err
	}
	err = m.exclusive(ctx, a, func(rt hub.AgentLoginRuntime) error {
		m.mu.Lock()
		st := a.status
		m.mu.Unlock()
		target, cred, err := find(st, ref, logout)
		if err != nil && logout && st.Capabilities.Logout && ownLogin(st, ref) {
			// The agent's own login, which an agent that cannot list its
			// logins (a custom ACP agent) names by its target.
			target, cred, err = ref.Target, hub.AgentCredential{ID: ref.Target, Removable: true}, nil
		}
		if err != nil {
			return err
		}
		switch {
		case logout && !st.Capabilities.Logout:
			return invalid("agent", a.info.Name+" cannot log out from the Hub.")
		case logout && !cred.Removable:
			return invalid("credential", "This login cannot be removed from the Hub: it comes from "+origin(cred.Kind)+".")
		case !logout && !st.Capabilities.Activate:
			return invalid("agent", a.info.Name+" has no active credential to choose.")
		}
		ref.Target = target
		err = m.call(ctx, func(ctx context.Context) error {
			if logout {
				return rt.Logout(ctx, ref)
			}
			return rt.Activate(ctx, ref)
		})
		if err != nil {
			return m.public(a, op, err, &Redactor{})
		}
		m.changed(ctx, a)
		return nil
	})
	if err != nil {
		return hub.AgentAccounts{}, err
	}
	return m.listing(), nil
}

// find looks ref's credential up in st: in ref's target when withTarget,
// else in any target.
func find(st hub.AgentLoginStatus, ref hub.AgentCredentialRef, withTarget bool) (string, hub.AgentCredential, error) {
	for _, t := range st.Targets {
		if withTarget && t.ID != ref.Target {
			continue
		}
		for _, c := range t.Credentials {
			if c.ID == ref.Credential {
				return t.ID, c, nil
			}
		}
	}
	return "", hub.AgentCredential{}, invalid("credential", "There is no such saved login.")
}

// ownLogin reports whether ref names its target itself, on a target
// that lists no removable login: logout of the agent's own login, which
// the agent does not list.
func ownLogin(st hub.AgentLoginStatus, ref hub.AgentCredentialRef) bool {
	if ref.Credential != ref.Target {
		return false
	}
	for _, t := range st.Targets {
		if t.ID == ref.Target {
			return !slices.ContainsFunc(t.Credentials, func(c hub.AgentCredential) bool { return c.Removable })
		}
	}
	return false
}

// origin says where a credential the Hub cannot remove comes from.
func origin(kind string) string {
	switch kind {
	case hub.AgentCredentialEnv:
		return "the Hub's environment"
	case hub.AgentCredentialConfig:
		return "a configuration file"
	default:
		return "outside the agent's own store"
	}
}
