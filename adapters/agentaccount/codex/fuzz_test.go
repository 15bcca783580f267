package codex

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/matryer/is"
)

// Lines codex-cli 0.166.0 wrote, offline, with a throwaway CODEX_HOME.
var realLines = []string{
	`{"id":1,"result":{"userAgent":"wharf/0.166.0 (Debian 12.0.0; x86_64) unknown (wharf; 0)","codexHome":"/var/tmp/h/.codex","platformFamily":"unix","platformOs":"linux"}}`,
	`{"method":"configWarning","params":{"summary":"Codex could not find bubblewrap on PATH.","details":null},"emittedAtMs":1795799795476}`,
	`{"method":"remoteControl/status/changed","params":{"status":"disabled","serverName":"vm","installationId":"6b35faa5-a9ce-408b-a5c4-b21d3432472a","environmentId":null},"emittedAtMs":1795799795476}`,
	`{"id":2,"result":{"account":null,"requiresOpenaiAuth":true,"workspaceRouting":null}}`,
	`{"id":3,"error":{"code":-32600,"message":"Invalid request: missing field ` + "`params`" + `"}}`,
	`{"id":6,"result":{"type":"chatgpt","loginId":"58758788-8d7f-4739-ad46-710a89cd8215","authUrl":"https://auth.openai.com/oauth/authorize?response_type=code&client_id=app_EMoamEEZ73f0CkXaXp7hrann&redirect_uri=http%3A%2F%2F127.0.0.1%3A1455%2Fauth%2Fcallback&code_challenge=_E11Xbm3&code_challenge_method=S256&state=z7Opv5RS&scope=openid+profile+email+offline_access&id_token_add_organizations=true&codex_cli_simplified_flow=true&originator=wharf"}}`,
	`{"method":"account/login/completed","params":{"loginId":"58758788-8d7f-4739-ad46-710a89cd8215","success":false,"error":"Login server error: Login cancelled","onboardingEntrypoint":null},"emittedAtMs":1795799818368}`,
	`{"method":"account/login/completed","params":{"loginId":null,"success":true,"error":null,"onboardingEntrypoint":null},"emittedAtMs":1795799801003}`,
	`{"error":{"code":-32603,"message":"failed to request device code: error sending request for url (https://auth.openai.com/api/accounts/deviceauth/usercode)"},"id":2}`,
	`{"id":4,"result":{"status":"notFound"}}`,
	`{"id":"srv-1","method":"item/tool/requestUserInput","params":{}}`,
}

func TestLinesAreToldApartAsCodexMeansThem(t *testing.T) {
	for _, tc := range []struct {
		line string
		kind string // response, request, notification or malformed
	}{
		{realLines[0], "response"},
		{realLines[1], "notification"},
		{realLines[4], "response"},
		{realLines[10], "request"},
		{`{"id":0,"result":{}}`, "malformed"}, // not an id this client sends
		{`{"id":"7","result":{}}`, "malformed"},
		{`{"id":7}`, "malformed"},
		{`{"id":7,"error":{"message":"no code"}}`, "malformed"},
		{`{"method":""}`, "malformed"},
		{`{"id":{"a":1},"method":"x"}`, "malformed"},
		{`not json`, "malformed"},
	} {
		t.Run(tc.line, func(t *testing.T) {
			is := is.New(t)
			m, err := parseMessage([]byte(tc.line))
			kind := "malformed"
			switch {
			case err != nil:
			case m.isResponse():
				kind = "response"
			case m.isRequest():
				kind = "request"
			case m.isNotification():
				kind = "notification"
			}
			is.Equal(kind, tc.kind) // told apart
		})
	}
}

func TestLoginAnswersAreKeptOnlyWhenThePageIsAWebPage(t *testing.T) {
	for _, tc := range []struct {
		name, answer, want string
		ok                 bool
	}{
		{"codex's browser login", `{"type":"chatgpt","loginId":"l-1","authUrl":"https://auth.openai.com/oauth/authorize?x=1"}`, loginBrowser, true},
		{"codex's device login", `{"type":"chatgptDeviceCode","loginId":"l-1","verificationUrl":"https://auth.openai.com/codex/device","userCode":"ABCD-EFGH"}`, loginDevice, true},
		{"a key login", `{"type":"apiKey"}`, loginAPIKey, true},
		{"another type than asked", `{"type":"apiKey"}`, loginBrowser, false},
		{"a script address", `{"type":"chatgpt","loginId":"l-1","authUrl":"javascript:alert(1)"}`, loginBrowser, false},
		{"a plain-http page", `{"type":"chatgpt","loginId":"l-1","authUrl":"http://auth.openai.com/"}`, loginBrowser, false},
		{"a page with a user name", `{"type":"chatgpt","loginId":"l-1","authUrl":"https://me@auth.openai.com/"}`, loginBrowser, false},
		{"no login id", `{"type":"chatgpt","authUrl":"https://auth.openai.com/"}`, loginBrowser, false},
		{"a code on two lines", `{"type":"chatgptDeviceCode","loginId":"l-1","verificationUrl":"https://a.b/","userCode":"AB\nCD"}`, loginDevice, false},
		{"no code", `{"type":"chatgptDeviceCode","loginId":"l-1","verificationUrl":"https://a.b/"}`, loginDevice, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := parseStarted([]byte(tc.answer), tc.want)
			is.Equal(err == nil, tc.ok) // kept or refused
		})
	}
}

// FuzzParseMessage: any line parses to one kind of message within the
// bounds, or is refused.
func FuzzParseMessage(f *testing.F) {
	for _, line := range realLines {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := parseMessage(line)
		if err != nil {
			return
		}
		kinds := 0
		for _, k := range []bool{m.isResponse(), m.isRequest(), m.isNotification()} {
			if k {
				kinds++
			}
		}
		if kinds != 1 {
			t.Fatalf("a message of %d kinds", kinds)
		}
		if m.isResponse() && (m.id <= 0 || (m.err == nil) == (m.result == nil)) {
			t.Fatalf("a response with id %d and neither or both of a result and an error", m.id)
		}
		if len(m.method) > maxMethod || !utf8.ValidString(m.method) || len(m.rawID) > maxID {
			t.Fatal("a method or id over its bound")
		}
		if m.isRequest() && !json.Valid(m.rawID) {
			t.Fatal("a request id that cannot be echoed")
		}
	})
}

// FuzzParseAccount: any account/read answer that parses gives a status
// whose texts are short, one-line and valid.
func FuzzParseAccount(f *testing.F) {
	f.Add([]byte(`{"account":null,"requiresOpenaiAuth":true,"workspaceRouting":null}`))
	f.Add([]byte(`{"account":{"type":"apiKey"},"requiresOpenaiAuth":true}`))
	f.Add([]byte(`{"account":{"type":"chatgpt","email":"a@b.c","planType":"plus","workspaceName":"W"},"requiresOpenaiAuth":true}`))
	f.Add([]byte(`{"account":{"type":"amazonBedrock","usesCodexManagedCredentials":true},"requiresOpenaiAuth":false}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := parseAccount(raw)
		if err != nil {
			return
		}
		st := statusOf(versionOf("x/"+string(raw)), a)
		texts := []string{st.Version, st.Account.Source, st.Account.Email, st.Account.Plan, st.Account.Organization, st.Account.Provider}
		for _, c := range st.Targets[0].Credentials {
			texts = append(texts, c.ID, c.Label, c.Kind)
		}
		for _, s := range texts {
			if len(s) > 2*maxText || !printable(s) {
				t.Fatalf("a status text over its bound or not one line: %q", s)
			}
		}
		if st.Targets[0].Connected != (len(st.Targets[0].Credentials) == 1) {
			t.Fatal("connected without a credential, or a credential not connected")
		}
	})
}

// FuzzParseStarted: a login answer that parses gives a page a person may
// open and a code that is one short line.
func FuzzParseStarted(f *testing.F) {
	f.Add([]byte(`{"type":"chatgpt","loginId":"l","authUrl":"https://auth.openai.com/oauth/authorize?redirect_uri=http%3A%2F%2F127.0.0.1%3A1455%2Fauth%2Fcallback"}`), uint8(1))
	f.Add([]byte(`{"type":"chatgptDeviceCode","loginId":"l","verificationUrl":"https://auth.openai.com/codex/device","userCode":"ABCD-EFGH"}`), uint8(2))
	f.Add([]byte(`{"type":"apiKey"}`), uint8(0))
	kinds := []string{loginAPIKey, loginBrowser, loginDevice}
	f.Fuzz(func(t *testing.T, raw []byte, kind uint8) {
		want := kinds[int(kind)%len(kinds)]
		s, err := parseStarted(raw, want)
		if err != nil || want == loginAPIKey {
			return
		}
		u, perr := url.Parse(s.URL)
		if perr != nil || u.Scheme != "https" || u.User != nil || len(s.URL) > maxURL {
			t.Fatalf("a page no one should open: %q", s.URL)
		}
		if !loginID(s.LoginID) || len(s.UserCode) > maxCode || strings.ContainsAny(s.UserCode, "\r\n") {
			t.Fatal("a login id or code over its bound")
		}
	})
}

// FuzzParseCompleted: a completion that parses names a login id within
// its bound, or none.
func FuzzParseCompleted(f *testing.F) {
	f.Add([]byte(`{"loginId":"58758788-8d7f-4739-ad46-710a89cd8215","success":false,"error":"Login server error: Login cancelled","onboardingEntrypoint":null}`))
	f.Add([]byte(`{"loginId":null,"success":true,"error":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := parseCompleted(raw)
		if err != nil {
			return
		}
		if c.LoginID != "" && !loginID(c.LoginID) {
			t.Fatal("a login id over its bound")
		}
	})
}
