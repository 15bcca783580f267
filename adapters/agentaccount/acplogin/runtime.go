package acplogin

import (
	"context"
	"errors"
	"slices"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/wharfhub/wharf/hub"
)

// runtime is a started custom agent: its status is what its `initialize`
// answer declared, fixed for the runtime's life.
type runtime struct {
	c     *conn
	id    string // the agent's id and its target's
	name  string
	login login
}

var _ hub.AgentLoginRuntime = (*runtime)(nil)

// alive refuses a call to a runtime that has ended.
func (r *runtime) alive() error {
	if r.c.ended() {
		return hub.Errorf(hub.Unavailable, "%s's login interface has ended.", r.name)
	}
	return nil
}

// Status implements hub.AgentLoginRuntime: what `initialize` declared,
// with the env credentials of the runtime's environment. It asks the
// agent nothing (ACP has no status query).
func (r *runtime) Status(ctx context.Context) (hub.AgentLoginStatus, error) {
	if err := ctx.Err(); err != nil {
		return hub.AgentLoginStatus{}, hub.Wrap(hub.Unavailable, err, "The request ended.")
	}
	if err := r.alive(); err != nil {
		return hub.AgentLoginStatus{}, err
	}
	return cloneStatus(r.login.status), nil
}

// LoginWithKey implements hub.AgentLoginRuntime: refused, ACP takes no
// key (an env_var method reads the Hub's environment, set by hand).
func (r *runtime) LoginWithKey(context.Context, hub.AgentKeyLogin) error {
	return invalid("method", r.name+"'s login interface (ACP) takes no key from the Hub: "+r.login.guidance+".")
}

// Login implements hub.AgentLoginRuntime: refused, ACP hands no sign-in
// address back.
func (r *runtime) Login(context.Context, hub.AgentLoginStart) (hub.AgentLoginFlow, error) {
	return nil, invalid("method", r.name+"'s login interface (ACP) hands no sign-in address back to the Hub: "+r.login.guidance+".")
}

// Logout implements hub.AgentLoginRuntime. ACP's `logout` ends "the
// agent's own login", whichever it is: its credential id is the target's
// id. An env credential is not the agent's to remove.
func (r *runtime) Logout(ctx context.Context, ref hub.AgentCredentialRef) error {
	if err := r.alive(); err != nil {
		return err
	}
	switch {
	case !r.login.status.Capabilities.Logout:
		return invalid("agent", r.name+" declares no logout; log it out on the Hub machine.")
	case ref.Target != "" && ref.Target != r.id:
		return invalid("target", "There is no such provider for "+r.name+".")
	case r.login.env[ref.Credential] != nil:
		return invalid("credential", "This login comes from the Hub's environment: unset "+
			strings.Join(r.login.env[ref.Credential], " and ")+" where the Hub runs.")
	case ref.Credential != r.id:
		return invalid("credential", "There is no such saved login.")
	}
	lctx, cancel := context.WithTimeout(ctx, LogoutTimeout)
	defer cancel()
	_, err := r.c.sdk.Logout(lctx, acpsdk.LogoutRequest{})
	var re *acpsdk.RequestError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re) && !r.c.ended() && lctx.Err() == nil:
		return &hub.Error{Kind: hub.Invalid, Err: err, Message: r.name + " refused to log out.", Details: &hub.Details{Field: "credential"}}
	}
	return r.c.failure(lctx, err, "could not log out")
}

// Activate implements hub.AgentLoginRuntime: refused, ACP has no
// activate.
func (r *runtime) Activate(context.Context, hub.AgentCredentialRef) error {
	return invalid("agent", r.name+" has no active credential to choose.")
}

// Done implements hub.AgentLoginRuntime: closed once the agent exited and
// was reaped.
func (r *runtime) Done() <-chan struct{} { return r.c.done }

// Close implements hub.AgentLoginRuntime.
func (r *runtime) Close() { r.c.Close() }

func invalid(field, message string) error {
	return &hub.Error{Kind: hub.Invalid, Message: message, Details: &hub.Details{Field: field}}
}

// cloneStatus copies st, so a caller changing its answer changes nothing
// here.
func cloneStatus(st hub.AgentLoginStatus) hub.AgentLoginStatus {
	st.Targets = slices.Clone(st.Targets)
	for i := range st.Targets {
		t := &st.Targets[i]
		t.Credentials = slices.Clone(t.Credentials)
		for j := range t.Credentials {
			t.Credentials[j].Variables = slices.Clone(t.Credentials[j].Variables)
		}
		t.Methods = slices.Clone(t.Methods)
		for j := range t.Methods {
			t.Methods[j].Variables = slices.Clone(t.Methods[j].Variables)
		}
	}
	return st
}
