package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// The fake's browser logins, as OpenCode's plugins make them: authorize
// answers {url, method: "code"|"auto", instructions}; callback finishes
// with the pasted code ("code") or waits for the plugin ("auto").

// FakeCode is the code the fakecode login accepts.
const FakeCode = "fake-code-ok"

// pendingLogin is the browser login a provider waits on.
type pendingLogin struct {
	method string // "code" or "auto"
	done   chan struct{}
	ok     bool // valid once done is closed
	once   sync.Once
	stop   func() // closes the login's listener
}

func newPending(method string) *pendingLogin {
	return &pendingLogin{method: method, done: make(chan struct{}), stop: func() {}}
}

// settle ends an "auto" login with its outcome, once.
func (p *pendingLogin) settle(ok bool) {
	p.once.Do(func() {
		p.ok = ok
		close(p.done)
	})
}

// close drops the login: its listener goes, a waiting callback fails.
func (p *pendingLogin) close() {
	p.settle(false)
	p.stop()
}

// requestBody decodes a request's JSON body strictly, as the real
// server's schemas (additionalProperties: false) do.
func requestBody(r *http.Request, v any) bool {
	data, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	return d.Decode(v) == nil
}

// authorize answers POST /provider/{id}/oauth/authorize.
func (s *server) authorize(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var in struct {
		Method *float64          `json:"method"`
		Inputs map[string]string `json:"inputs"`
	}
	if !requestBody(r, &in) || in.Method == nil {
		writeJSON(w, 400, map[string]any{"name": "BadRequest", "data": map[string]any{}})
		return
	}
	methods, i := authMethods[id], int(*in.Method)
	if i < 0 || i >= len(methods) || float64(i) != *in.Method {
		unknownError(w) // the plugin's lookup throws
		return
	}
	if methods[i].(map[string]any)["type"] != "oauth" {
		writeJSON(w, 200, nil) // OpenCode answers null for an API method
		return
	}
	state := random()
	var p *pendingLogin
	var answer map[string]any
	switch id {
	case "fakecode":
		p = newPending("code")
		answer = map[string]any{"method": "code", "instructions": "Open the page, log in, and paste the code it shows.",
			"url": "https://fakecode.example/oauth/authorize?client_id=fake&response_type=code&state=" + state}
	case "fakeloop":
		region, tenant := in.Inputs["region"], in.Inputs["tenant"]
		switch {
		case region != "us" && region != "eu":
			validationFailed(w, "region", "Choose a region")
			return
		case region == "eu" && tenant == "":
			validationFailed(w, "tenant", "Tenant is required")
			return
		case strings.Trim(tenant, "abcdefghijklmnopqrstuvwxyz") != "":
			validationFailed(w, "tenant", "Use lowercase letters only: "+tenant) // repeats the answer, as plugins may
			return
		}
		p = newPending("auto")
		port, ok := s.listen(w, p, "/auth/callback", func(q url.Values) bool { return q.Get("state") == state && q.Get("code") != "" })
		if !ok {
			return
		}
		redirect := "http://localhost:" + port + "/auth/callback"
		answer = map[string]any{"method": "auto", "instructions": "Complete authorization in your browser. This window will close automatically.",
			"url": "https://fakeloop.example/authorize?response_type=code&region=" + region + "&redirect_uri=" + url.QueryEscape(redirect) + "&state=" + state}
	case "fakedevice":
		p = newPending("auto")
		port, ok := s.listen(w, p, "/device", func(url.Values) bool { return true })
		if !ok {
			return
		}
		answer = map[string]any{"method": "auto", "instructions": "Enter code: WXYZ-1234",
			"url": "http://127.0.0.1:" + port + "/device"}
	}
	s.mu.Lock()
	if old := s.pending[id]; old != nil {
		old.close()
	}
	s.pending[id] = p
	s.mu.Unlock()
	writeJSON(w, 200, answer)
}

// listen starts the loopback listener of an "auto" login: it records
// every request it gets and settles the login with the first one on
// path (accepted when accept says so). It answers the error itself when
// it cannot listen.
func (s *server) listen(w http.ResponseWriter, p *pendingLogin, path string, accept func(url.Values) bool) (string, bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		unknownError(w)
		return "", false
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		appendRecord("callbacks", r.Method+" "+r.RequestURI)
		ok := r.URL.Path == path && accept(r.URL.Query())
		if r.URL.Path == path {
			p.settle(ok)
		}
		if !ok {
			http.Error(w, "Authorization failed", http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, "Login successful. You can close this window.")
	})}
	go func() { _ = srv.Serve(ln) }()
	p.stop = func() { _ = srv.Close() }
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port, true
}

// callback answers POST /provider/{id}/oauth/callback.
func (s *server) callback(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var in struct {
		Method *float64 `json:"method"`
		Code   *string  `json:"code"`
	}
	if !requestBody(r, &in) || in.Method == nil {
		writeJSON(w, 400, map[string]any{"name": "BadRequest", "data": map[string]any{}})
		return
	}
	s.mu.Lock()
	p := s.pending[id]
	s.mu.Unlock()
	if p == nil {
		writeJSON(w, 400, map[string]any{"name": "ProviderAuthOauthMissing", "data": map[string]any{"providerID": id}})
		return
	}
	if p.method == "code" {
		switch {
		case in.Code == nil || *in.Code == "":
			writeJSON(w, 400, map[string]any{"name": "ProviderAuthOauthCodeMissing", "data": map[string]any{"providerID": id}})
		case *in.Code != FakeCode:
			writeJSON(w, 400, map[string]any{"name": "ProviderAuthOauthCallbackFailed", "data": map[string]any{}})
		default:
			s.finishLogin(w, id)
		}
		return
	}
	select {
	case <-p.done:
	case <-r.Context().Done():
		return // the client gave up; the login stays pending
	}
	if !p.ok {
		unknownError(w) // the plugin's promise rejects: OpenCode answers 500
		return
	}
	s.finishLogin(w, id)
}

// finishLogin saves a browser login's tokens and answers true.
func (s *server) finishLogin(w http.ResponseWriter, id string) {
	expires := time.Now().Add(time.Hour).UnixMilli()
	e := authEntry{Type: "oauth", Refresh: "fake-refresh-" + random(), Access: "fake-access-" + random(), Expires: &expires}
	if err := s.saveLogin(id, e); err != nil {
		unknownError(w)
		return
	}
	writeJSON(w, 200, true)
}

// validationFailed is a plugin's refusal of a prompt's answer.
func validationFailed(w http.ResponseWriter, field, msg string) {
	writeJSON(w, 400, map[string]any{"name": "ProviderAuthValidationFailed", "data": map[string]any{"field": field, "message": msg}})
}

// unknownError is the real server's answer to a failure it did not expect.
func unknownError(w http.ResponseWriter) {
	writeJSON(w, 500, map[string]any{"name": "UnknownError", "data": map[string]any{
		"message": "Unexpected server error. Check server logs for details.", "ref": "err_" + random()[:8]}})
}

// random is a fresh random hex string.
func random() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
