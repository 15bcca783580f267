package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"time"
)

// login is a pending ChatGPT login: a browser one with its listener, or
// a device one.
type login struct {
	id       string
	device   bool
	state    string
	ln       net.Listener
	listener *http.Server
}

// loginStart answers account/login/start for each login type codex has.
func (s *server) loginStart(req request) {
	var p struct {
		Type   *string `json:"type"`
		APIKey *string `json:"apiKey"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.Type == nil {
		s.fail(req.ID, -32600, "Invalid request: missing field `type`")
		return
	}
	switch *p.Type {
	case "apiKey":
		s.keyLogin(req, p.APIKey)
	case "chatgpt":
		s.browserLogin(req)
	case "chatgptDeviceCode":
		s.deviceLogin(req)
	default:
		s.fail(req.ID, -32600, "Invalid request: unknown variant `"+*p.Type+"`, expected one of `apiKey`, `chatgpt`, `chatgptDeviceCode`, `chatgptAuthTokens`, `amazonBedrock`, `amazonBedrockAccessKeys`")
	}
}

// keyLogin saves the key as codex does (any string, an empty one too).
func (s *server) keyLogin(req request, key *string) {
	if key == nil {
		s.fail(req.ID, -32600, "Invalid request: missing field `apiKey`")
		return
	}
	if os.Getenv("CODEXSERVER_REFUSE_KEYS") == "1" {
		s.fail(req.ID, -32600, "Invalid request: the key "+*key+" was refused")
		return
	}
	if err := s.writeAuth(authFile{Mode: "apikey", APIKey: key}); err != nil {
		s.fail(req.ID, -32603, "failed to save api key: "+err.Error())
		return
	}
	s.reply(req.ID, map[string]any{"type": "apiKey"})
	s.notify("account/login/completed", map[string]any{"loginId": nil, "success": true, "error": nil})
	s.notify("account/updated", map[string]any{"authMode": "apikey", "planType": nil})
}

// browserLogin starts the loopback listener and answers the authorize
// URL whose redirect_uri it is; a pending login is abandoned first.
func (s *server) browserLogin(req request) {
	s.abandon("Login server error: Login cancelled")
	ln, err := net.Listen("tcp", "127.0.0.1:"+envOr("CODEXSERVER_LOGIN_PORT", "0"))
	if err != nil {
		s.fail(req.ID, -32603, "failed to start login server: "+err.Error())
		return
	}
	l := &login{id: uuid(), state: random(32), ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { s.callback(l, w, r) })
	l.listener = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go l.listener.Serve(ln)
	s.mu.Lock()
	s.login = l
	client := s.clientName
	s.mu.Unlock()
	redirect := fmt.Sprintf("http://127.0.0.1:%d/auth/callback", ln.Addr().(*net.TCPAddr).Port)
	q := url.Values{"response_type": {"code"}, "client_id": {"app_fake"}, "redirect_uri": {redirect},
		"code_challenge": {random(32)}, "code_challenge_method": {"S256"}, "state": {l.state},
		"scope": {"openid profile email offline_access"}, "id_token_add_organizations": {"true"},
		"codex_cli_simplified_flow": {"true"}, "originator": {client}}
	authURL := envOr("CODEXSERVER_AUTH_BASE", "https://auth.openai.com/oauth/authorize") + "?" + q.Encode()
	s.reply(req.ID, map[string]any{"type": "chatgpt", "loginId": l.id, "authUrl": authURL})
}

// callback is the listener: it records every request, completes the
// login on its callback with the right state and code, refuses a wrong
// state (the login stays pending), and cancels on /cancel, as codex's.
func (s *server) callback(l *login, w http.ResponseWriter, r *http.Request) {
	s.record("callback " + r.URL.RequestURI())
	switch r.URL.Path {
	case "/auth/callback":
	case "/cancel":
		fmt.Fprint(w, "Login cancelled")
		s.finish(l, false, "Login server error: Login cancelled")
		return
	default:
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	switch {
	case q.Get("state") != l.state:
		http.Error(w, "State mismatch", http.StatusBadRequest)
	case q.Get("error") != "":
		fmt.Fprint(w, "<!doctype html><title>Codex Sign-in Error</title>")
		s.finish(l, false, "Login server error: Sign-in failed: "+q.Get("error_description"))
	case q.Get("code") != envOr("CODEXSERVER_CODE", "fake-code"):
		fmt.Fprint(w, "<!doctype html><title>Codex Sign-in Error</title>")
		s.finish(l, false, "Login server error: Token exchange failed: invalid_grant")
	default:
		if err := s.saveChatGPT(); err != nil {
			http.Error(w, "could not save", http.StatusInternalServerError)
			s.finish(l, false, "Login server error: "+err.Error())
			return
		}
		fmt.Fprint(w, "<!doctype html><title>Signed in to Codex</title>")
		s.finish(l, true, "")
	}
}

// deviceLogin answers a device code; SIGUSR1 or SIGUSR2 settles it.
func (s *server) deviceLogin(req request) {
	if os.Getenv("CODEXSERVER_DEVICE") == "offline" {
		s.fail(req.ID, -32603, "failed to request device code: error sending request for url (https://auth.openai.com/api/accounts/deviceauth/usercode)")
		return
	}
	s.abandon("Login server error: Login cancelled")
	l := &login{id: uuid(), device: true}
	s.mu.Lock()
	s.login = l
	s.mu.Unlock()
	code := userCode()
	s.reply(req.ID, map[string]any{"type": "chatgptDeviceCode", "loginId": l.id,
		"verificationUrl": "https://auth.openai.com/codex/device", "userCode": code[:4] + "-" + code[4:]})
}

// deviceOutcome settles the pending device login: approved or denied.
func (s *server) deviceOutcome(approved bool) {
	s.mu.Lock()
	l := s.login
	s.mu.Unlock()
	if l == nil || !l.device {
		return
	}
	if approved {
		if err := s.saveChatGPT(); err != nil {
			s.finish(l, false, "Login server error: "+err.Error())
			return
		}
		s.finish(l, true, "")
		return
	}
	s.finish(l, false, "device code authorization was denied")
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// loginCancel answers account/login/cancel as codex does: an id that is
// no UUID is an error; a pending login is canceled; any other notFound.
func (s *server) loginCancel(req request) {
	var p struct {
		LoginID *string `json:"loginId"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.LoginID == nil {
		s.fail(req.ID, -32600, "Invalid request: missing field `loginId`")
		return
	}
	if !uuidPattern.MatchString(*p.LoginID) {
		s.fail(req.ID, -32600, "invalid login id: "+*p.LoginID)
		return
	}
	s.mu.Lock()
	l := s.login
	s.mu.Unlock()
	if l == nil || l.id != *p.LoginID {
		s.reply(req.ID, map[string]any{"status": "notFound"})
		return
	}
	s.stop(l)
	s.reply(req.ID, map[string]any{"status": "canceled"})
	s.finish(l, false, "Login server error: Login was not completed")
}

// abandon ends the pending login, if any, with message.
func (s *server) abandon(message string) {
	s.mu.Lock()
	l := s.login
	s.mu.Unlock()
	if l != nil {
		s.finish(l, false, message)
	}
}

// finish settles l once: its listener stops, then codex's notifications.
func (s *server) finish(l *login, success bool, message string) {
	s.mu.Lock()
	current := s.login == l
	if current {
		s.login = nil
	}
	s.mu.Unlock()
	if !current {
		return
	}
	s.stop(l)
	var errText any
	if !success {
		errText = message
	}
	s.notify("account/login/completed", map[string]any{"loginId": l.id, "success": success, "error": errText})
	if success {
		s.notify("account/updated", map[string]any{"authMode": "chatgpt", "planType": envOr("CODEXSERVER_PLAN", "plus")})
	}
}

// stop closes l's listener at once, so that a request after the login
// settled is refused as codex's closed listener refuses it, and lets the
// request being answered finish in the background (Shutdown, called from
// its own handler, would wait for it).
func (s *server) stop(l *login) {
	if l.listener == nil {
		return
	}
	_ = l.ln.Close()
	srv := l.listener
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
}

// stopLogin ends the pending login when the client goes.
func (s *server) stopLogin() {
	s.mu.Lock()
	l := s.login
	s.login = nil
	s.mu.Unlock()
	if l != nil && l.listener != nil {
		_ = l.listener.Close()
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// random is n random bytes, base64url without padding.
func random(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// userCode is a random 8-letter device code, in codex's alphabet.
func userCode() string {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 8)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// uuid is a random version-4 UUID, as codex's login ids.
func uuid() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
