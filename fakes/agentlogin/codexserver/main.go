// Command codexserver is a fake `codex app-server` for tests: the same
// stdio JSON-RPC (no "jsonrpc" member, one object a line), the same
// account methods, params, answers, errors and notifications as
// codex-cli 0.166.0, deterministic and offline. It keeps its login where
// codex does, $CODEX_HOME/auth.json (default ~/.codex), in codex's shape.
//
// Usage: codexserver app-server
//
// A browser login ({type: chatgpt}) runs a loopback callback listener
// (127.0.0.1, port CODEXSERVER_LOGIN_PORT, default any) at
// /auth/callback, which completes the login when the query carries the
// login's state and the expected code. A device login completes when the
// process gets SIGUSR1 and fails on SIGUSR2: the test decides when.
//
// Scripting, by environment:
//
//	CODEXSERVER_RECORD=file    append "call <method>" for every request and
//	                           "callback <request URI>" for every listener request
//	CODEXSERVER_CODE=code      the authorization code the token exchange accepts (default fake-code)
//	CODEXSERVER_EMAIL, _PLAN   what a ChatGPT login saves (default dev@example.com, plus)
//	CODEXSERVER_ROUTING=offline account/read of a ChatGPT login fails as codex's does offline
//	CODEXSERVER_DEVICE=offline  a device login cannot start, as codex's offline
//	CODEXSERVER_AUTH_BASE=url  the authorize page (default OpenAI's)
//	CODEXSERVER_REFUSE_KEYS=1  refuse key logins with an error quoting the key
//	CODEXSERVER_ECHO_STDERR=1  copy every line received to stderr (secrets included)
//	CODEXSERVER_ASK=1          before answering the first account/read, ask the
//	                           client something and wait for its answer
//	CODEXSERVER_SILENT=method  never answer method
//	CODEXSERVER_EXIT_ON=method exit 3 on receiving method
//	CODEXSERVER_OVERLONG=n     write a line of n bytes before every answer
//	CODEXSERVER_CHILD=file     start a child in the process group, and write its pid to file
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "linger" {
		select {} // the child of CODEXSERVER_CHILD: lives until its group is killed
	}
	if len(os.Args) != 2 || os.Args[1] != "app-server" {
		fmt.Fprintln(os.Stderr, "usage: codexserver app-server")
		os.Exit(2)
	}
	s, err := newServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "codexserver:", err)
		os.Exit(1)
	}
	if err := s.startChild(); err != nil {
		fmt.Fprintln(os.Stderr, "codexserver:", err)
		os.Exit(1)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		for sig := range sigs {
			s.deviceOutcome(sig == syscall.SIGUSR1)
		}
	}()
	s.serve()
}

// server is the fake's state; out is written one line at a time.
type server struct {
	home  string // CODEX_HOME
	outMu sync.Mutex
	out   *bufio.Writer

	mu          sync.Mutex
	initialized bool
	clientName  string
	login       *login // the pending ChatGPT login, if any
	asked       bool   // CODEXSERVER_ASK's question was sent
	held        []json.RawMessage
}

func newServer() (*server, error) {
	home := os.Getenv("CODEX_HOME")
	if home == "" {
		h := os.Getenv("HOME")
		if h == "" {
			return nil, fmt.Errorf("neither CODEX_HOME nor HOME is set")
		}
		home = filepath.Join(h, ".codex")
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	return &server{home: home, out: bufio.NewWriter(os.Stdout)}, nil
}

// startChild starts CODEXSERVER_CHILD's child in this process's group.
func (s *server) startChild() error {
	file := os.Getenv("CODEXSERVER_CHILD")
	if file == "" {
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.Command(self, "linger")
	if err := child.Start(); err != nil {
		return err
	}
	return os.WriteFile(file, []byte(strconv.Itoa(child.Process.Pid)), 0o600)
}

// request is one line from the client.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// serve reads requests until stdin ends (codex exits then).
func (s *server) serve() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			s.handle(line)
		}
		if err != nil {
			s.stopLogin()
			return
		}
	}
}

func (s *server) handle(line []byte) {
	if os.Getenv("CODEXSERVER_ECHO_STDERR") == "1" {
		os.Stderr.Write(line)
	}
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return // codex drops what it cannot parse
	}
	if req.Method == "" {
		s.answered(req)
		return
	}
	s.record("call " + req.Method)
	if req.Method == os.Getenv("CODEXSERVER_EXIT_ON") {
		os.Exit(3)
	}
	if req.Method == os.Getenv("CODEXSERVER_SILENT") || req.ID == nil {
		return // a notification ("initialized"), or scripted silence
	}
	s.mu.Lock()
	initialized := s.initialized
	s.mu.Unlock()
	if req.Method != "initialize" && !initialized {
		s.fail(req.ID, -32600, "Not initialized")
		return
	}
	switch req.Method {
	case "initialize":
		s.initialize(req)
	case "account/read":
		s.accountRead(req)
	case "account/login/start":
		s.loginStart(req)
	case "account/login/cancel":
		s.loginCancel(req)
	case "account/logout":
		s.logout(req)
	default:
		// codex-cli 0.166.0 answers nothing to a method it does not know.
	}
}

func (s *server) initialize(req request) {
	var p struct {
		ClientInfo *struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"clientInfo"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.ClientInfo == nil {
		s.fail(req.ID, -32600, "Invalid request: missing field `clientInfo`")
		return
	}
	s.mu.Lock()
	already := s.initialized
	s.initialized, s.clientName = true, p.ClientInfo.Name
	s.mu.Unlock()
	if already {
		s.fail(req.ID, -32600, "Already initialized")
		return
	}
	s.reply(req.ID, map[string]any{
		"userAgent": p.ClientInfo.Name + "/0.0.0-fake (Linux; x86_64) codexserver (" + p.ClientInfo.Name + "; " + p.ClientInfo.Version + ")",
		"codexHome": s.home, "platformFamily": "unix", "platformOs": "linux",
	})
	// codex tells a new client about its remote control at once.
	s.notify("remoteControl/status/changed", map[string]any{"status": "disabled", "serverName": "fake"})
}

// accountRead answers from auth.json, as codex does.
func (s *server) accountRead(req request) {
	if req.Params == nil {
		s.fail(req.ID, -32600, "Invalid request: missing field `params`")
		return
	}
	if os.Getenv("CODEXSERVER_ASK") == "1" && s.ask(req) {
		return // answered once the client answered the question
	}
	auth, err := s.readAuth()
	switch {
	case err != nil:
		s.fail(req.ID, -32600, "Invalid request: failed to load auth: "+err.Error())
	case auth == nil:
		s.reply(req.ID, map[string]any{"account": nil, "requiresOpenaiAuth": true, "workspaceRouting": nil})
	case auth.Mode == "apikey":
		s.reply(req.ID, map[string]any{"account": map[string]any{"type": "apiKey"}, "requiresOpenaiAuth": true, "workspaceRouting": nil})
	case os.Getenv("CODEXSERVER_ROUTING") == "offline":
		s.fail(req.ID, -32603, "workspace routing discovery failed")
	default:
		email, plan := auth.claims()
		s.reply(req.ID, map[string]any{"account": map[string]any{"type": "chatgpt", "email": email, "planType": plan},
			"requiresOpenaiAuth": true, "workspaceRouting": nil})
	}
}

// ask sends the client a request of codex's own before the first
// account/read is answered, and holds that read until the client answers.
func (s *server) ask(req request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.asked {
		return false
	}
	s.asked = true
	s.held = append(s.held, req.ID)
	s.send(map[string]any{"id": "fake-question-1", "method": "item/tool/requestUserInput",
		"params": map[string]any{"threadId": "t", "turnId": "u", "itemId": "i", "questions": []any{}}})
	return true
}

// answered takes the client's answer to ask's question and answers the
// held account/read.
func (s *server) answered(resp request) {
	if string(resp.ID) != `"fake-question-1"` || resp.Error == nil && resp.Result == nil {
		return
	}
	s.record("answer " + string(resp.ID))
	s.mu.Lock()
	held := s.held
	s.held = nil
	s.mu.Unlock()
	for _, id := range held {
		s.accountRead(request{ID: id, Method: "account/read", Params: json.RawMessage("{}")})
	}
}

func (s *server) logout(req request) {
	if err := os.Remove(s.authPath()); err != nil && !os.IsNotExist(err) {
		s.fail(req.ID, -32603, "failed to remove auth: "+err.Error())
		return
	}
	s.reply(req.ID, map[string]any{})
	s.notify("account/updated", map[string]any{"authMode": nil, "planType": nil})
}

// record appends line to CODEXSERVER_RECORD, before anything is answered.
func (s *server) record(line string) {
	file := os.Getenv("CODEXSERVER_RECORD")
	if file == "" {
		return
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}

// reply answers id with result.
func (s *server) reply(id json.RawMessage, result any) {
	s.send(map[string]any{"id": id, "result": result})
}

// fail answers id with a JSON-RPC error.
func (s *server) fail(id json.RawMessage, code int, message string) {
	s.send(map[string]any{"id": id, "error": map[string]any{"code": code, "message": message}})
}

func (s *server) notify(method string, params any) {
	s.send(map[string]any{"method": method, "params": params, "emittedAtMs": 0})
}

// send writes one message as a line, preceded by CODEXSERVER_OVERLONG's
// overlong line.
func (s *server) send(msg any) {
	line, err := json.Marshal(msg)
	if err != nil {
		panic(err)
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if n, _ := strconv.Atoi(os.Getenv("CODEXSERVER_OVERLONG")); n > 0 {
		s.out.WriteString(`{"method":"configWarning","params":{"summary":"`)
		s.out.WriteString(strings.Repeat("x", n))
		s.out.WriteString("\"}}\n")
	}
	s.out.Write(line)
	s.out.WriteByte('\n')
	s.out.Flush()
}
