package codex

import (
	"context"
	"errors"
	"strings"

	"github.com/wharfhub/wharf/hub"
)

// Codex keeps one login, for OpenAI, in $CODEX_HOME/auth.json: an API
// key or a ChatGPT login (or, experimentally, a cloud provider's). The
// status shows it as one target with at most one credential.

// The target, methods and credentials this driver names.
const (
	targetID   = "openai"
	targetName = "OpenAI"

	methodKey     = "api-key"
	methodBrowser = "chatgpt"
	methodDevice  = "chatgpt-device"

	credKey     = "apikey" // as codex's auth_mode names it
	credChatGPT = "chatgpt"
)

// account/login/start's login types.
const (
	loginAPIKey  = "apiKey"
	loginBrowser = "chatgpt"
	loginDevice  = "chatgptDeviceCode"
)

// methods are the ways to log Codex in.
func methods() []hub.AgentLoginMethod {
	return []hub.AgentLoginMethod{
		{ID: methodKey, Kind: hub.AgentMethodKey, Label: "OpenAI API key", Fields: []hub.AgentLoginField{}},
		{ID: methodBrowser, Kind: hub.AgentMethodOAuth, Label: "Sign in with ChatGPT",
			Fields: []hub.AgentLoginField{}, Completion: hub.CompletionRedirect},
		{ID: methodDevice, Kind: hub.AgentMethodOAuth, Label: "Sign in with ChatGPT using a device code",
			Fields: []hub.AgentLoginField{}, Completion: hub.CompletionDevice},
	}
}

// Status reads codex's login with account/read, which reads auth.json
// and never starts a login or spends tokens.
func (r *runtime) Status(ctx context.Context) (hub.AgentLoginStatus, error) {
	a, err := r.readAccount(ctx)
	if err != nil {
		return hub.AgentLoginStatus{}, err
	}
	return statusOf(r.version, a), nil
}

// unconfirmed is the account of a ChatGPT login codex could not confirm
// with OpenAI (see readAccount).
const unconfirmed = "chatgpt-unconfirmed"

// readAccount calls account/read. Codex answers an internal error
// (-32603) to account/read only when it holds a ChatGPT login and could
// not check it with OpenAI (its workspace routing, which needs the
// network and a valid token: codex-rs/app-server account_processor's
// read_account): that is reported as a ChatGPT login it could not
// confirm, which can still be logged out of.
func (r *runtime) readAccount(ctx context.Context) (account, error) {
	raw, err := r.c.call(ctx, "account/read", struct{}{})
	var f *rpcFailure
	switch {
	case errors.As(err, &f) && f.Code == codeInternal:
		r.log.Info("codex could not confirm its ChatGPT login with OpenAI")
		return account{Type: unconfirmed, RequiresOpenAIAuth: true}, nil
	case err != nil:
		return account{}, r.unavailable(err, "account/read", "Codex could not read its login.")
	}
	a, err := parseAccount(raw)
	if err != nil {
		r.log.Warn("codex's account/read answer was not understood")
		return account{}, &hub.Error{Kind: hub.Unavailable, Message: "Codex answered in a way Wharf does not understand."}
	}
	return a, nil
}

// statusOf maps codex's account to the status.
func statusOf(version string, a account) hub.AgentLoginStatus {
	target := hub.AgentLoginTarget{ID: targetID, Name: targetName, Connected: a.Type != "",
		Credentials: []hub.AgentCredential{}, Methods: methods()}
	if c, ok := credentialOf(a); ok {
		target.Credentials = append(target.Credentials, c)
	}
	return hub.AgentLoginStatus{
		Version:      version,
		Capabilities: hub.AgentAccountCapabilities{Login: true, Logout: true, Activate: false},
		Account:      vendorAccountOf(a),
		Targets:      []hub.AgentLoginTarget{target},
	}
}

// vendorAccountOf is where codex's login comes from.
func vendorAccountOf(a account) *hub.AgentVendorAccount {
	switch a.Type {
	case "":
		if !a.RequiresOpenAIAuth {
			// Codex's model provider is not OpenAI's and needs no login.
			return &hub.AgentVendorAccount{Source: "third-party"}
		}
		return &hub.AgentVendorAccount{Source: "none"}
	case "apiKey":
		return &hub.AgentVendorAccount{Source: "api-key", Provider: targetID}
	case "chatgpt":
		plan := a.Plan
		if plan == "unknown" {
			plan = ""
		}
		return &hub.AgentVendorAccount{Source: "subscription", Email: a.Email, Plan: plan,
			Organization: a.Workspace, Provider: targetID}
	case unconfirmed:
		return &hub.AgentVendorAccount{Source: "subscription", Provider: targetID}
	case "amazonBedrock":
		return &hub.AgentVendorAccount{Source: "third-party", Provider: "amazon-bedrock"}
	case "gcp":
		return &hub.AgentVendorAccount{Source: "third-party", Provider: "gcp"}
	}
	return &hub.AgentVendorAccount{Source: "unknown"}
}

// credentialOf is codex's saved login as a credential; false when there
// is none.
func credentialOf(a account) (hub.AgentCredential, bool) {
	switch a.Type {
	case "":
		return hub.AgentCredential{}, false
	case "apiKey":
		return hub.AgentCredential{ID: credKey, Label: "OpenAI API key", Kind: hub.AgentCredentialKey,
			Active: true, Removable: true}, true
	case "chatgpt":
		label := "ChatGPT"
		if a.Email != "" {
			label += " (" + a.Email + ")"
		}
		return hub.AgentCredential{ID: credChatGPT, Label: label, Kind: hub.AgentCredentialOAuth,
			Active: true, Removable: true}, true
	case unconfirmed:
		return hub.AgentCredential{ID: credChatGPT, Label: "ChatGPT (OpenAI could not be reached to confirm it)",
			Kind: hub.AgentCredentialOAuth, Active: true, Removable: true}, true
	case "amazonBedrock":
		// Codex stores a Bedrock key itself only when it says so; else
		// the credential is AWS's, which logout cannot remove.
		kind := hub.AgentCredentialOther
		if a.ManagedByCode {
			kind = hub.AgentCredentialKey
		}
		return hub.AgentCredential{ID: a.Type, Label: "Amazon Bedrock", Kind: kind,
			Active: true, Removable: a.ManagedByCode}, true
	case "gcp":
		return hub.AgentCredential{ID: a.Type, Label: "Google Cloud Vertex AI", Kind: hub.AgentCredentialOther,
			Active: true}, true
	}
	// A type this driver does not know: shown, never removed by it.
	return hub.AgentCredential{ID: a.Type, Label: "Codex login (" + a.Type + ")", Kind: hub.AgentCredentialOther,
		Active: true}, true
}

// LoginWithKey saves an OpenAI API key with account/login/start {type:
// apiKey}: codex writes it to auth.json, replacing its login.
func (r *runtime) LoginWithKey(ctx context.Context, req hub.AgentKeyLogin) error {
	if err := checkTarget(req.Target); err != nil {
		return err
	}
	if req.Method != methodKey {
		return invalid("That is not one of Codex's key logins.", "method")
	}
	if err := noAnswers(req.Answers); err != nil {
		return err
	}
	if strings.TrimSpace(req.Key) == "" {
		// Codex itself saves an empty key.
		return invalid("Enter the API key.", "key")
	}
	if !printable(req.Key) {
		return invalid("The key must be one line of text.", "key")
	}
	raw, err := r.c.call(ctx, "account/login/start", map[string]string{"type": loginAPIKey, "apiKey": req.Key})
	if err != nil {
		return r.refused(err, "account/login/start", "Codex refused the key.", "Codex could not save the key.", "key")
	}
	if _, err := parseStarted(raw, loginAPIKey); err != nil {
		return &hub.Error{Kind: hub.Unavailable, Message: "Codex answered in a way Wharf does not understand."}
	}
	return nil
}

// Logout removes codex's saved login with account/logout, once the
// credential named is the one codex holds and codex can remove it.
func (r *runtime) Logout(ctx context.Context, ref hub.AgentCredentialRef) error {
	if err := checkTarget(ref.Target); err != nil {
		return err
	}
	a, err := r.readAccount(ctx)
	if err != nil {
		return err
	}
	c, ok := credentialOf(a)
	switch {
	case !ok || c.ID != ref.Credential:
		return invalid("Codex has no such saved login.", "credential")
	case !c.Removable:
		return invalid("Codex did not save this login, so it cannot remove it: it comes from its model provider's settings.", "credential")
	}
	if _, err := r.c.call(ctx, "account/logout", nil); err != nil {
		return r.refused(err, "account/logout", "Codex refused to log out.", "Codex could not remove its login.", "credential")
	}
	return nil
}

// Activate is refused: codex keeps one login, always the active one.
func (r *runtime) Activate(context.Context, hub.AgentCredentialRef) error {
	return invalid("Codex keeps one login: there is none to switch to.", "credential")
}

// refused maps a call's error: codex's invalid-request answer is a
// refusal of the input named by field (said in refusal, never in codex's
// words); another error answer is codex failing (said in failure); no
// answer is already Unavailable.
func (r *runtime) refused(err error, method, refusal, failure, field string) error {
	var f *rpcFailure
	if !errors.As(err, &f) {
		return err
	}
	r.log.Warn("codex refused a call", "method", method, "code", f.Code)
	if f.Code == codeInvalidRequest {
		return &hub.Error{Kind: hub.Invalid, Message: refusal, Details: &hub.Details{Field: field}, Err: f}
	}
	return &hub.Error{Kind: hub.Unavailable, Message: failure, Err: f}
}

func checkTarget(target string) error {
	if target != targetID {
		return invalid("Codex logs in to OpenAI only.", "target")
	}
	return nil
}

// noAnswers refuses answers: no Codex method asks for any.
func noAnswers(answers map[string]string) error {
	if len(answers) > 0 {
		return invalid("This login asks for no other answers.", "answers")
	}
	return nil
}

func invalid(message, field string) error {
	return &hub.Error{Kind: hub.Invalid, Message: message, Details: &hub.Details{Field: field}}
}
