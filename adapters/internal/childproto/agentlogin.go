package childproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/wharfhub/wharf/adapters/internal/jsonkeys"
)

// AgentLoginPath is the endpoint the Hub POSTs an AgentLogin to when a
// coding agent's login on the Hub machine changed (a login, a logout,
// another account made active). Like every path under InternalPrefix it
// is reached only by the Hub, over the child's private socket.
const AgentLoginPath = InternalPrefix + "agent-login"

// MaxAgentLoginBytes bounds the body of an AgentLogin request.
const MaxAgentLoginBytes = 4 << 10

// MaxAgentIDBytes bounds an agent's id: ParseArgs refuses a longer one,
// so no session knows an agent whose id is longer, and an AgentLogin
// always fits MaxAgentLoginBytes.
const MaxAgentIDBytes = 1 << 10

// AgentLogin is the body of POST AgentLoginPath: the id of the agent
// whose login changed. The child forgets that the agent asked for a login,
// moves its catalog revision (the inventory feed ticks) and restarts its
// agent once no turn of it runs; an agent it does not know is no change.
// It answers 204 with no body once it has taken the change, 400 for a
// body DecodeAgentLogin refuses, and 503 while it stops.
type AgentLogin struct {
	Agent string `json:"agent"`
}

// ValidAgentID reports whether id can be an agent's: not empty, at most
// MaxAgentIDBytes, without ':' (conversation ids are `<agent>:<session>`).
func ValidAgentID(id string) bool {
	return id != "" && len(id) <= MaxAgentIDBytes && !strings.Contains(id, ":")
}

// EncodeAgentLogin encodes the request; an id that cannot be an agent's
// is refused.
func EncodeAgentLogin(l AgentLogin) ([]byte, error) {
	if !ValidAgentID(l.Agent) {
		return nil, errors.New("agent login: not an agent id")
	}
	return json.Marshal(l)
}

// DecodeAgentLogin decodes the body of an AgentLogin request, strictly:
// exactly one JSON object of at most MaxAgentLoginBytes of valid UTF-8,
// whose one key is "agent", spelt so and given once, and whose value is
// a valid agent id (ValidAgentID).
func DecodeAgentLogin(data []byte) (AgentLogin, error) {
	if len(data) > MaxAgentLoginBytes {
		return AgentLogin{}, fmt.Errorf("agent login: body over %d bytes", MaxAgentLoginBytes)
	}
	if !utf8.Valid(data) {
		return AgentLogin{}, errors.New("agent login: not UTF-8")
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return AgentLogin{}, errors.New("agent login: not a JSON object")
	}
	var body struct {
		Agent *string `json:"agent"`
	}
	if err := jsonkeys.Check(data, reflect.TypeOf(body), "agent login"); err != nil {
		return AgentLogin{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return AgentLogin{}, fmt.Errorf("agent login: %w", err)
	}
	if dec.InputOffset() != int64(len(bytes.TrimRight(data, " \t\r\n"))) {
		return AgentLogin{}, errors.New("agent login: data after the object")
	}
	if body.Agent == nil || !ValidAgentID(*body.Agent) {
		return AgentLogin{}, errors.New("agent login: no agent id")
	}
	return AgentLogin{Agent: *body.Agent}, nil
}
