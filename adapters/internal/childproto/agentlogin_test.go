package childproto_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
)

func TestAnAgentLoginRoundTrips(t *testing.T) {
	is := is.New(t)
	for _, id := range []string{"claude", "codex", "my-agent_2", strings.Repeat("a", childproto.MaxAgentIDBytes)} {
		b, err := childproto.EncodeAgentLogin(childproto.AgentLogin{Agent: id})
		is.NoErr(err)                                    // encoded
		is.True(len(b) <= childproto.MaxAgentLoginBytes) // within the body's bound
		got, err := childproto.DecodeAgentLogin(b)
		is.NoErr(err)           // decoded
		is.Equal(got.Agent, id) // the same agent
	}
}

func TestAnAgentLoginThatIsNotOneIsRefused(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"empty", ``},
		{"not an object", `["claude"]`},
		{"a string", `"claude"`},
		{"no agent", `{}`},
		{"a null agent", `{"agent":null}`},
		{"an empty agent", `{"agent":""}`},
		{"a number", `{"agent":7}`},
		{"a conversation id", `{"agent":"claude:s1"}`},
		{"an unknown field", `{"agent":"claude","account":"ann"}`},
		{"the field in another case", `{"Agent":"claude"}`},
		{"the field twice", `{"agent":"nobody","agent":"claude"}`},
		{"not UTF-8", "{\"agent\":\"cl\xffude\"}"},
		{"trailing data", `{"agent":"claude"} x`},
		{"two objects", `{"agent":"claude"}{"agent":"codex"}`},
		{"an id too long", `{"agent":"` + strings.Repeat("a", childproto.MaxAgentIDBytes+1) + `"}`},
		{"a body too long", `{"agent":"claude"}` + strings.Repeat(" ", childproto.MaxAgentLoginBytes)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := childproto.DecodeAgentLogin([]byte(tc.body))
			is.True(err != nil) // refused
		})
	}
	is := is.New(t)
	for _, id := range []string{"", "a:b", strings.Repeat("a", childproto.MaxAgentIDBytes+1)} {
		_, err := childproto.EncodeAgentLogin(childproto.AgentLogin{Agent: id})
		is.True(err != nil) // never sent
	}
	_, err := childproto.DecodeAgentLogin([]byte(" {\"agent\":\"claude\"}\n"))
	is.NoErr(err) // white space around the object is fine
}

func TestAnAgentWhoseIDCannotBeSentIsRefusedAtStart(t *testing.T) {
	is := is.New(t)
	base := []string{"--workspace-id", "w", "--path", "/p", "--socket", "/s"}
	for _, id := range []string{"a:b", strings.Repeat("a", childproto.MaxAgentIDBytes+1)} {
		_, err := childproto.ParseArgs(append(base, "--agent", id+`=["x"]`), &strings.Builder{})
		is.True(err != nil) // refused: a login change could not name it
	}
}

// FuzzDecodeAgentLogin: the decoder never panics, and what it accepts is
// a valid id that encodes and decodes again to itself.
func FuzzDecodeAgentLogin(f *testing.F) {
	for _, seed := range []string{`{"agent":"claude"}`, `{"agent":"a:b"}`, `{"agent":"x"} `, `{"agent":"\u00e9"}`, `{}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		l, err := childproto.DecodeAgentLogin(body)
		if err != nil {
			return
		}
		if !childproto.ValidAgentID(l.Agent) {
			t.Fatalf("accepted %q, not an agent id", l.Agent)
		}
		b, err := childproto.EncodeAgentLogin(l)
		if err != nil {
			t.Fatalf("accepted %q but cannot encode it: %v", l.Agent, err)
		}
		again, err := childproto.DecodeAgentLogin(b)
		if err != nil || again != l {
			t.Fatalf("%q reads back as %q (%v)", l.Agent, again.Agent, err)
		}
	})
}
