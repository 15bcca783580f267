package opencode

import (
	"slices"

	"github.com/wharfhub/wharf/hub"
)

// checkAnswers checks answers against a method's fields the way OpenCode's
// own clients ask them: in order, each field whose conditions hold on the
// answers so far (a condition on an unanswered field does not hold) is
// asked; the others are not, and an answer to them is dropped. It returns
// the answers to send. A refusal is Invalid naming the field (or
// "answers" for an answer to nothing this method asks); no message
// repeats an answer, which may be secret.
func checkAnswers(fields []hub.AgentLoginField, answers map[string]string) (map[string]string, error) {
	refuse := func(field, msg string) (map[string]string, error) {
		return nil, &hub.Error{Kind: hub.Invalid, Message: msg, Details: &hub.Details{Field: field}}
	}
	for name := range answers {
		if !slices.ContainsFunc(fields, func(f hub.AgentLoginField) bool { return f.Key == name }) {
			return refuse("answers", "An answer names a question this login method does not ask.")
		}
	}
	asked := map[string]string{}
	for _, f := range fields {
		if !holds(f.When, asked) {
			continue
		}
		v, ok := answers[f.Key]
		switch {
		case f.Kind == "select" && ok && !slices.ContainsFunc(f.Options, func(o hub.AgentFieldOption) bool { return o.Value == v }):
			return refuse(f.Key, "That is not one of the choices of “"+f.Label+"”.")
		case f.Required && v == "":
			return refuse(f.Key, "“"+f.Label+"” needs an answer.")
		case ok:
			asked[f.Key] = v
		}
	}
	return asked, nil
}

// holds reports whether every condition holds on the answers so far.
func holds(when []hub.AgentFieldCondition, answers map[string]string) bool {
	for _, c := range when {
		v, ok := answers[c.Key]
		if !ok || (c.Op == "eq") != (v == c.Value) {
			return false
		}
	}
	return true
}
