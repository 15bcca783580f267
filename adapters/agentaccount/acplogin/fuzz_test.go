package acplogin

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/wharfhub/wharf/hub"
)

// FuzzStatusOf feeds `initialize` answers to statusOf: data as the
// agent wrote it, and methods of each type made of the strings id, label
// and word. Whatever the agent declares, the status keeps its bounds,
// lists usable ids once, shows one-line commands, and never a value of
// the environment.
func FuzzStatusOf(f *testing.F) {
	f.Add([]byte(hostileInit), "ok", "Log in", "--login")
	f.Add([]byte(`{"protocolVersion":1,"agentCapabilities":{"auth":{"logout":{}}},"authMethods":[`+
		`{"args":["--login"],"env":{"ACPAGENT_LOGIN":"1"},"id":"terminal-login","name":"Log in in a terminal","type":"terminal"},`+
		`{"id":"env-A","name":"A key","type":"env_var","vars":[{"name":"A","secret":true},{"name":"B","optional":true}]},`+
		`{"id":"agent-login","name":"Log in with acpagent"}]}`), "x\ny", "\u202e", "it's")
	f.Add([]byte(`{"protocolVersion":1,"authMethods":[]}`), "", "", "")
	const secret = "sk-fuzz-secret"
	env := []string{"A=" + secret, "B=" + secret, "GOOD_KEY=" + secret}
	f.Fuzz(func(t *testing.T, data []byte, id, label, word string) {
		var res acpsdk.InitializeResponse
		if json.Unmarshal(data, &res) == nil {
			checkStatus(t, res, env, secret)
		}
		res = acpsdk.InitializeResponse{AuthMethods: []acpsdk.AuthMethod{
			{EnvVar: &acpsdk.AuthMethodEnvVarInline{Type: "env_var", Id: id, Name: label, Vars: []acpsdk.AuthEnvVar{{Name: word}, {Name: "A"}}}},
			{Terminal: &acpsdk.AuthMethodTerminalInline{Type: "terminal", Id: id + "t", Name: label, Args: []string{word}, Env: map[string]any{word: word}}},
			{Agent: &acpsdk.AuthMethodAgent{Id: id + "a", Name: label}},
		}, AgentInfo: &acpsdk.Implementation{Version: label}}
		checkStatus(t, res, env, secret)
	})
}

func checkStatus(t *testing.T, res acpsdk.InitializeResponse, env []string, secret string) {
	l := statusOf("custom", "Custom", []string{"agent", "--acp"}, res, env)
	st := l.status
	if len(st.Targets) != 1 || st.Targets[0].ID != "custom" {
		t.Fatalf("targets %+v", st.Targets)
	}
	tg := st.Targets[0]
	if len(tg.Methods) > maxMethods || len(st.Version) > maxVersion || !oneLine(st.Version) {
		t.Fatalf("bounds broken: %d methods, version %q", len(tg.Methods), st.Version)
	}
	seen := map[string]bool{}
	for _, m := range tg.Methods {
		if !validID(m.ID) || seen[m.ID] || len(m.Label) > maxLabel || !oneLine(m.Label) {
			t.Fatalf("method %+v", m)
		}
		seen[m.ID] = true
		switch m.Kind {
		case hub.AgentMethodCommand:
			if m.Command == "" || len(m.Command) > maxCommand || !oneLine(m.Command) {
				t.Fatalf("command %q", m.Command)
			}
		case hub.AgentMethodEnv:
			if len(m.Variables) == 0 || len(m.Variables) > maxVars {
				t.Fatalf("variables %q", m.Variables)
			}
		default:
			t.Fatalf("kind %q", m.Kind)
		}
	}
	active := 0
	for _, c := range tg.Credentials {
		if c.Removable || c.Kind != hub.AgentCredentialEnv || !seen[strings.TrimPrefix(c.ID, "env:")] {
			t.Fatalf("credential %+v", c)
		}
		if c.Active {
			active++
		}
	}
	if active > 1 || tg.Connected != (len(tg.Credentials) > 0) {
		t.Fatalf("%d active, connected %v", active, tg.Connected)
	}
	b, err := json.Marshal(st)
	if err != nil || bytes.Contains(b, []byte(secret)) || strings.Contains(l.guidance, secret) {
		t.Fatalf("status %s (%v)", b, err)
	}
}

// FuzzClassify feeds lines to classify: a request is only ever answered
// with an id that encodes, and nothing panics.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":"r1","method":"fs/read_text_file","params":{}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{}}`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"id":{"a":[1]},"method":""}`,
		"not ACP", "", "[1,2]", `{"method":null,"id":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		kind, id := classify(line)
		if kind == lineRequest {
			b, err := json.Marshal(struct {
				ID json.RawMessage `json:"id"`
			}{id})
			if err != nil || !json.Valid(b) {
				t.Fatalf("request id %q does not encode: %v", id, err)
			}
		} else if id != nil {
			t.Fatalf("kind %d with an id", kind)
		}
	})
}

func oneLine(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, isControl)
}
