package opencode

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"

	"github.com/wharfhub/wharf/hub"
)

// method finds the method a change names on a target OpenCode knows, of
// kind kind. Callers hold r.instance.
func (v *view) method(target, id, kind string) (hub.AgentLoginMethod, error) {
	if !v.known(target) {
		return hub.AgentLoginMethod{}, invalid("target", "OpenCode does not know this provider.")
	}
	i := slices.IndexFunc(v.targetMethods(target), func(m hub.AgentLoginMethod) bool { return m.ID == id })
	if i < 0 {
		return hub.AgentLoginMethod{}, invalid("method", "This provider has no such login method.")
	}
	m := v.targetMethods(target)[i]
	if m.Kind != kind {
		msg := "This login method does not take a key."
		if kind == hub.AgentMethodOAuth {
			msg = "This login method is not a browser login."
		}
		return hub.AgentLoginMethod{}, invalid("method", msg)
	}
	return m, nil
}

// LoginWithKey saves a key login with `PUT /auth/{provider}` {type:
// "api", key, metadata?: the method's answers}, as OpenCode's own
// clients do, then has the server re-read its store. Bounded by
// callTimeout per call.
func (r *runtime) LoginWithKey(ctx context.Context, req hub.AgentKeyLogin) error {
	if req.Key == "" {
		return invalid("key", "The key is empty.")
	}
	if err := r.checkWritable(); err != nil {
		return err
	}
	r.instance.RLock()
	v, err := r.view(ctx, false)
	var m hub.AgentLoginMethod
	if err == nil {
		m, err = v.method(req.Target, req.Method, hub.AgentMethodKey)
	}
	var answers map[string]string
	if err == nil {
		answers, err = checkAnswers(m.Fields, req.Answers)
	}
	if err != nil {
		r.instance.RUnlock()
		return err
	}
	body := map[string]any{"type": "api", "key": req.Key}
	if len(answers) > 0 {
		body["metadata"] = answers
	}
	a, err := r.client.call(ctx, "PUT", "/auth/"+url.PathEscape(req.Target), body, callTimeout)
	r.instance.RUnlock()
	switch {
	case err != nil:
		return r.failed(err, "OpenCode's login server did not answer.")
	case a.status == 400:
		// Its message repeats the request, key included: never shown.
		return invalid("key", "OpenCode refused the key.")
	case !a.ok() || !isTrue(a.body):
		return r.failed(statusError("PUT /auth", a), "OpenCode's login server could not save the key.")
	}
	r.log.Info("key login saved", "target", req.Target)
	r.changed(ctx)
	return nil
}

// Logout removes a saved login with `DELETE /auth/{provider}`: the one
// login OpenCode keeps for the provider, whose credential id is the
// provider's. A key from the environment or the configuration, or a
// connection OpenCode makes itself, cannot be removed.
func (r *runtime) Logout(ctx context.Context, ref hub.AgentCredentialRef) error {
	st, err := readStore(r.d.opts.Env)
	if err != nil {
		return hub.Wrap(hub.Unavailable, err, "The Hub could not read OpenCode's saved logins.")
	}
	saved := slices.ContainsFunc(st.Logins, func(l savedLogin) bool { return l.Provider == ref.Target })
	switch {
	case st.FromEnv && saved && ref.Credential == ref.Target:
		return invalid("credential", "This login comes from the "+authContentVar+" environment variable: change it where the Hub runs.")
	case ref.Credential == credEnv:
		return invalid("credential", "This key comes from an environment variable: unset it where the Hub runs.")
	case ref.Credential == credConfig:
		return invalid("credential", "This key is set in OpenCode's configuration: remove it there.")
	case ref.Credential == credOther:
		return invalid("credential", "OpenCode connects this provider itself: there is no saved login to remove.")
	case ref.Credential != ref.Target || !saved:
		return invalid("credential", "There is no such saved login.")
	}
	a, err := r.client.call(ctx, "DELETE", "/auth/"+url.PathEscape(ref.Target), nil, callTimeout)
	switch {
	case err != nil:
		return r.failed(err, "OpenCode's login server did not answer.")
	case !a.ok() || !isTrue(a.body):
		return r.failed(statusError("DELETE /auth", a), "OpenCode's login server could not remove the login.")
	}
	r.log.Info("login removed", "target", ref.Target)
	r.changed(ctx)
	return nil
}

// Activate is refused: OpenCode 1.x keeps one login per provider, so
// there is never another to make active (capabilities.activate is false).
func (r *runtime) Activate(context.Context, hub.AgentCredentialRef) error {
	return invalid("credential", "OpenCode keeps one login per provider: there is no other to make active.")
}

// checkWritable refuses a login OpenCode would not use: with
// OPENCODE_AUTH_CONTENT set it reads its logins from that variable only.
func (r *runtime) checkWritable() error {
	st, err := readStore(r.d.opts.Env)
	if err != nil {
		return hub.Wrap(hub.Unavailable, err, "The Hub could not read OpenCode's saved logins.")
	}
	if st.FromEnv {
		return invalid("", "OpenCode reads its logins from the "+authContentVar+
			" environment variable where the Hub runs: a login made here would not be used.")
	}
	return nil
}

// isTrue reports whether an answer's body is JSON true, as OpenCode's
// auth and callback routes answer success.
func isTrue(body []byte) bool {
	var b bool
	return json.Unmarshal(body, &b) == nil && b
}
