package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The wire: what `codex app-server` sends on stdout, one JSON object a
// line, JSON-RPC 2.0 without the "jsonrpc" member (as learned from
// codex-rs/app-server-protocol and from running codex-cli 0.166.0).
// Every parser here takes untrusted bytes and either returns values
// within the bounds below or an error; none keeps a string it was not
// asked for.

// Bounds of what the parsers keep.
const (
	maxMethod = 256  // bytes of a method name
	maxText   = 256  // bytes of an email, plan, workspace name or type kept
	maxID     = 128  // bytes of a login id
	maxURL    = 8192 // bytes of a URL to open
	maxCode   = 64   // bytes of a device user code
)

// errMalformed is what every parser returns for input it does not accept.
// It never carries the input.
var errMalformed = errors.New("codex sent a message Wharf does not understand")

// message is one line from codex: a response (id with result or error), a
// request of codex's own (id with method) or a notification (method only).
type message struct {
	id     int64  // a response's id; 0 when codex's id is not one we send
	rawID  []byte // a request's id as sent, to answer it
	method string
	params json.RawMessage
	result json.RawMessage
	err    *rpcFailure
}

// The kinds of message.
func (m message) isResponse() bool     { return m.method == "" }
func (m message) isRequest() bool      { return m.method != "" && m.rawID != nil }
func (m message) isNotification() bool { return m.method != "" && m.rawID == nil }

// rpcFailure is codex's error answer to a call. Only its code is kept:
// codex's message can repeat what it was sent (a key), so it never
// leaves the parser.
type rpcFailure struct {
	Code int64
}

func (f *rpcFailure) Error() string {
	return "codex answered with error " + strconv.FormatInt(f.Code, 10)
}

// The JSON-RPC error codes codex answers with.
const (
	codeInvalidRequest = -32600 // a refusal: bad params, unknown login id, not initialized
	codeInternal       = -32603 // codex failed: OpenAI unreachable, a listener it could not start
)

// parseMessage parses one line.
func parseMessage(line []byte) (message, error) {
	var w struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code *int64 `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &w); err != nil {
		return message{}, errMalformed
	}
	var m message
	if w.Method != nil {
		if *w.Method == "" || len(*w.Method) > maxMethod || !utf8.ValidString(*w.Method) {
			return message{}, errMalformed
		}
		m.method, m.params = *w.Method, w.Params
		if id := bytes.TrimSpace(w.ID); len(id) > 0 && !bytes.Equal(id, []byte("null")) {
			if !validID(id) {
				return message{}, errMalformed
			}
			m.rawID = append([]byte(nil), id...)
		}
		return m, nil
	}
	// A response: to one of our calls, whose ids are positive integers.
	id, err := strconv.ParseInt(string(bytes.TrimSpace(w.ID)), 10, 64)
	if err != nil || id <= 0 {
		return message{}, errMalformed
	}
	m.id = id
	switch {
	case w.Error != nil:
		if w.Error.Code == nil {
			return message{}, errMalformed
		}
		m.err = &rpcFailure{Code: *w.Error.Code}
	case len(w.Result) > 0:
		m.result = w.Result
	default:
		return message{}, errMalformed
	}
	return m, nil
}

// validID reports whether a request id is a JSON string or integer, as
// JSON-RPC allows, short enough to echo back.
func validID(id []byte) bool {
	if len(id) > maxID {
		return false
	}
	if id[0] == '"' {
		var s string
		return json.Unmarshal(id, &s) == nil
	}
	_, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil
}

// account is what account/read answered.
type account struct {
	// Type is codex's account type: apiKey, chatgpt, amazonBedrock, gcp,
	// or "" when codex has no login.
	Type          string
	Email         string
	Plan          string
	Workspace     string
	ManagedByCode bool // amazonBedrock: codex stores the credential (logout removes it)
	// RequiresOpenAIAuth is false when codex's model provider needs no
	// OpenAI login.
	RequiresOpenAIAuth bool
}

// parseAccount parses account/read's result.
func parseAccount(raw []byte) (account, error) {
	var w struct {
		Account *struct {
			Type          *string `json:"type"`
			Email         *string `json:"email"`
			PlanType      *string `json:"planType"`
			WorkspaceName *string `json:"workspaceName"`
			Managed       *bool   `json:"usesCodexManagedCredentials"`
		} `json:"account"`
		RequiresOpenaiAuth *bool `json:"requiresOpenaiAuth"`
	}
	if err := json.Unmarshal(raw, &w); err != nil || w.RequiresOpenaiAuth == nil {
		return account{}, errMalformed
	}
	a := account{RequiresOpenAIAuth: *w.RequiresOpenaiAuth}
	if w.Account == nil {
		return a, nil
	}
	if w.Account.Type == nil || !token(*w.Account.Type) {
		return account{}, errMalformed
	}
	a.Type = *w.Account.Type
	a.Email = text(w.Account.Email)
	a.Workspace = text(w.Account.WorkspaceName)
	if w.Account.PlanType != nil && token(*w.Account.PlanType) {
		a.Plan = *w.Account.PlanType
	}
	a.ManagedByCode = w.Account.Managed != nil && *w.Account.Managed
	return a, nil
}

// started is what account/login/start answered.
type started struct {
	Type     string // apiKey, chatgpt or chatgptDeviceCode
	LoginID  string
	URL      string // authUrl or verificationUrl: https
	UserCode string // chatgptDeviceCode
}

// parseStarted parses account/login/start's result for a login of type
// want: the answer must be of that type, with what that type carries.
func parseStarted(raw []byte, want string) (started, error) {
	var w struct {
		Type            string `json:"type"`
		LoginID         string `json:"loginId"`
		AuthURL         string `json:"authUrl"`
		VerificationURL string `json:"verificationUrl"`
		UserCode        string `json:"userCode"`
	}
	if err := json.Unmarshal(raw, &w); err != nil || w.Type != want {
		return started{}, errMalformed
	}
	s := started{Type: w.Type}
	switch want {
	case loginAPIKey:
		return s, nil
	case loginBrowser:
		s.URL = w.AuthURL
	case loginDevice:
		s.URL = w.VerificationURL
		if w.UserCode == "" || len(w.UserCode) > maxCode || !printable(w.UserCode) {
			return started{}, errMalformed
		}
		s.UserCode = w.UserCode
	default:
		return started{}, errMalformed
	}
	if !loginID(w.LoginID) || !openable(s.URL) {
		return started{}, errMalformed
	}
	s.LoginID = w.LoginID
	return s, nil
}

// completed is an account/login/completed notification.
type completed struct {
	LoginID string // "" for a key login, which has none
	Success bool
}

// parseCompleted parses account/login/completed's params. Codex's error
// text is not kept: it can quote what the login page sent back.
func parseCompleted(raw []byte) (completed, error) {
	var w struct {
		LoginID *string `json:"loginId"`
		Success *bool   `json:"success"`
	}
	if err := json.Unmarshal(raw, &w); err != nil || w.Success == nil {
		return completed{}, errMalformed
	}
	c := completed{Success: *w.Success}
	if w.LoginID != nil {
		if !loginID(*w.LoginID) {
			return completed{}, errMalformed
		}
		c.LoginID = *w.LoginID
	}
	return c, nil
}

// versionOf is codex's version in initialize's userAgent
// ("wharf/0.166.0 (Debian 12; x86_64) …"); "" when it has none.
func versionOf(userAgent string) string {
	_, rest, ok := strings.Cut(userAgent, "/")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, " ")
	if v == "" || len(v) > 32 {
		return ""
	}
	for _, r := range v {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '.' || r == '-' || r == '+') {
			return ""
		}
	}
	return v
}

// token reports whether s is a short identifier codex uses for a type or
// a plan (letters, digits, _ and -).
func token(s string) bool {
	if s == "" || len(s) > maxText {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// loginID reports whether s can be a login id: short and printable.
func loginID(s string) bool { return s != "" && len(s) <= maxID && printable(s) }

// text is s when it is short, valid, one-line text; "" otherwise (a
// missing value is no error: it is shown as unknown).
func text(s *string) string {
	if s == nil || len(*s) > maxText || !printable(*s) {
		return ""
	}
	return *s
}

// printable reports whether s is valid UTF-8 with no control character.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// openable reports whether s is a page a person may be sent to: an
// absolute https URL with a host and no user name, of bounded length.
func openable(s string) bool {
	if len(s) > maxURL || !printable(s) {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.User == nil
}
