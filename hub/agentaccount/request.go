package agentaccount

import (
	"strings"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// The request limits (bytes, unless said).
const (
	MaxBody     = 96 << 10 // a whole request body
	MaxName     = 256      // agent, target, method and credential
	MaxKey      = 64 << 10
	MaxCode     = MaxAddress
	MaxAnswers  = 32 // entries
	MaxAnswer   = 4096
	MaxAttempt  = 64 // characters of an attemptId
	MinRedacted = 4  // shorter submitted secrets are not searched for
)

// invalid is the 400 of an input, naming the field and never its value.
func invalid(field, message string) error {
	return &hub.Error{Kind: hub.Invalid, Message: message, Details: &hub.Details{Field: field}}
}

// name checks a required short string: non-blank, valid UTF-8, at most
// MaxName bytes.
func name(field, v string) error {
	switch {
	case strings.TrimSpace(v) == "":
		return invalid(field, "The "+field+" is required.")
	case len(v) > MaxName:
		return invalid(field, "The "+field+" is too long.")
	case !utf8.ValidString(v):
		return invalid(field, "The "+field+" is not valid text.")
	}
	return nil
}

// answers checks a method's answers: at most MaxAnswers entries, each
// key a short name and each value at most MaxAnswer bytes.
func answers(a map[string]string) error {
	if len(a) > MaxAnswers {
		return invalid("answers", "Too many answers.")
	}
	for k, v := range a {
		if err := name("answers", k); err != nil {
			return invalid("answers", "An answer's name is blank or too long.")
		}
		if len(v) > MaxAnswer {
			return invalid("answers", "An answer is too long.")
		}
		if !utf8.ValidString(v) {
			return invalid("answers", "An answer is not valid text.")
		}
	}
	return nil
}

// CheckKeyLogin checks a key login's input.
func CheckKeyLogin(r hub.AgentKeyLogin) error {
	for _, f := range []struct{ field, v string }{{"agent", r.Agent}, {"target", r.Target}, {"method", r.Method}} {
		if err := name(f.field, f.v); err != nil {
			return err
		}
	}
	switch {
	case strings.TrimSpace(r.Key) == "":
		return invalid("key", "The key is required.")
	case len(r.Key) > MaxKey:
		return invalid("key", "The key is too long.")
	case !utf8.ValidString(r.Key):
		return invalid("key", "The key is not valid text.")
	}
	return answers(r.Answers)
}

// CheckLoginStart checks a browser or device login's input.
func CheckLoginStart(r hub.AgentLoginStart) error {
	for _, f := range []struct{ field, v string }{{"agent", r.Agent}, {"target", r.Target}, {"method", r.Method}} {
		if err := name(f.field, f.v); err != nil {
			return err
		}
	}
	return answers(r.Answers)
}

// CheckCredentialRef checks logout's and activate's input. Activate
// names no target: target is checked only when withTarget.
func CheckCredentialRef(r hub.AgentCredentialRef, withTarget bool) error {
	if err := name("agent", r.Agent); err != nil {
		return err
	}
	if withTarget {
		if err := name("target", r.Target); err != nil {
			return err
		}
	}
	return name("credential", r.Credential)
}

// CheckAttemptID checks an attemptId from a path: non-blank, at most
// MaxAttempt characters.
func CheckAttemptID(id string) error {
	switch {
	case strings.TrimSpace(id) == "":
		return invalid("attemptId", "The login id is required.")
	case utf8.RuneCountInString(id) > MaxAttempt || !utf8.ValidString(id):
		return invalid("attemptId", "The login id is too long.")
	}
	return nil
}

// CheckCode checks a pasted code.
func CheckCode(code string) error {
	switch {
	case strings.TrimSpace(code) == "":
		return invalid("code", "The code is required.")
	case len(code) > MaxCode:
		return invalid("code", "The code is too long.")
	case !utf8.ValidString(code):
		return invalid("code", "The code is not valid text.")
	}
	return nil
}

// CheckAddress checks a pasted address's size before CheckRedirect
// confines it.
func CheckAddress(address string) error {
	switch {
	case strings.TrimSpace(address) == "":
		return invalid("address", "The address is required.")
	case len(address) > MaxAddress:
		return invalid("address", "The address is too long.")
	}
	return nil
}
