package opencode

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

func TestTheListeningLineGivesTheServersLoopbackAddress(t *testing.T) {
	tests := []struct{ name, out, want string }{
		{"the line of 1.18.33", "opencode server listening on http://127.0.0.1:4096\n", "http://127.0.0.1:4096"},
		{"after a warning", "Warning: OPENCODE_SERVER_PASSWORD is not set; server is unsecured.\nopencode server listening on http://127.0.0.1:36403\n", "http://127.0.0.1:36403"},
		{"another host", "opencode server listening on http://0.0.0.0:4096\n", ""},
		{"another scheme", "opencode server listening on https://127.0.0.1:4096\n", ""},
		{"a user", "opencode server listening on http://u@127.0.0.1:4096\n", ""},
		{"a path", "opencode server listening on http://127.0.0.1:4096/x\n", ""},
		{"no port", "opencode server listening on http://127.0.0.1\n", ""},
		{"a port out of range", "opencode server listening on http://127.0.0.1:70000\n", ""},
		{"no line", "starting\n", ""},
		{"the line past the bound", strings.Repeat("x\n", maxStartOutput) + "opencode server listening on http://127.0.0.1:4096\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(listenAddress(strings.NewReader(tt.out)), tt.want) // the address, or none
		})
	}
}

func TestTheAuthorizeAnswerBecomesAChallenge(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  hub.AgentLoginChallenge
		code  bool
		field string
		kind  hub.Kind
	}{
		{"openai's browser login: a loopback redirect", `{"url":"https://auth.openai.com/oauth/authorize?response_type=code&redirect_uri=http%3A%2F%2Flocalhost%3A1455%2Fauth%2Fcallback&state=s","method":"auto","instructions":"Complete authorization in your browser."}`,
			hub.AgentLoginChallenge{URL: "https://auth.openai.com/oauth/authorize?response_type=code&redirect_uri=http%3A%2F%2Flocalhost%3A1455%2Fauth%2Fcallback&state=s",
				Instructions: "Complete authorization in your browser.", Completion: hub.CompletionRedirect, Callback: "http://localhost:1455/auth/callback"}, false, "", 0},
		{"a device login shows its code", `{"url":"https://github.com/login/device","method":"auto","instructions":"Enter code: AB12-CD34"}`,
			hub.AgentLoginChallenge{URL: "https://github.com/login/device", Instructions: "Enter code: AB12-CD34", Completion: hub.CompletionDevice, UserCode: "AB12-CD34"}, false, "", 0},
		{"a code login", `{"url":"https://claude.ai/oauth/authorize?redirect_uri=https%3A%2F%2Fconsole.anthropic.com%2Foauth%2Fcode%2Fcallback","method":"code","instructions":"Paste the code"}`,
			hub.AgentLoginChallenge{URL: "https://claude.ai/oauth/authorize?redirect_uri=https%3A%2F%2Fconsole.anthropic.com%2Foauth%2Fcode%2Fcallback", Instructions: "Paste the code", Completion: hub.CompletionCode}, true, "", 0},
		{"the answer for an API method", `null`, hub.AgentLoginChallenge{}, false, "method", hub.Invalid},
		{"an address no one can open", `{"url":"javascript:alert(1)","method":"auto","instructions":""}`, hub.AgentLoginChallenge{}, false, "", hub.Unavailable},
		{"an unknown method", `{"url":"https://x.example","method":"push","instructions":""}`, hub.AgentLoginChallenge{}, false, "", hub.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			ch, code, err := challengeOf([]byte(tt.in))
			if tt.kind != 0 {
				is.Equal(hub.KindOf(err), tt.kind) // refused as expected
				if tt.field != "" {
					var e *hub.Error
					is.True(errors.As(err, &e) && e.Details != nil && e.Details.Field == tt.field) // naming the field
				}
				return
			}
			is.NoErr(err)           // accepted
			is.Equal(ch, tt.want)   // the challenge
			is.Equal(code, tt.code) // and whether a code finishes it
		})
	}
}

// FuzzListenAddress: whatever the server prints, the address is none or
// an http: one on 127.0.0.1 with a port.
func FuzzListenAddress(f *testing.F) {
	f.Add("opencode server listening on http://127.0.0.1:4096\n")
	f.Add("Warning\nopencode server listening on http://[::1]:1/\n")
	f.Fuzz(func(t *testing.T, out string) {
		addr := listenAddress(strings.NewReader(out))
		if addr == "" {
			return
		}
		u, err := url.Parse(addr)
		if err != nil || u.Scheme != "http" || u.Hostname() != "127.0.0.1" || u.Port() == "" || u.Path != "" {
			t.Fatalf("address %q", addr)
		}
	})
}

// FuzzChallenge: an authorize answer yields a challenge with an http(s)
// URL, bounded instructions and a completion, or is refused.
func FuzzChallenge(f *testing.F) {
	f.Add([]byte(`{"url":"https://a.example/?redirect_uri=http%3A%2F%2Flocalhost%3A1455%2Fcb","method":"auto","instructions":"x"}`))
	f.Add([]byte(`{"url":"https://a.example/device","method":"auto","instructions":"Enter code: ABCD-1234"}`))
	f.Add([]byte(`{"url":"https://a.example/","method":"code","instructions":""}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ch, _, err := challengeOf(data)
		if err != nil {
			return
		}
		u, err := url.Parse(ch.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || len(ch.Instructions) > maxText || !utf8.ValidString(ch.Instructions) {
			t.Fatalf("challenge %+v", ch)
		}
		switch ch.Completion {
		case hub.CompletionCode, hub.CompletionDevice:
		case hub.CompletionRedirect:
			if ch.Callback == "" {
				t.Fatalf("redirect without a callback: %+v", ch)
			}
		default:
			t.Fatalf("completion %q", ch.Completion)
		}
	})
}
