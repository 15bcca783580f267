package agentaccount_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/agentaccount"
)

func TestBadInputIsRefusedNamingItsField(t *testing.T) {
	ok := hub.AgentKeyLogin{Agent: "a", Target: "t", Method: "m", Key: "k"}
	many := map[string]string{}
	for i := range 33 {
		many[strings.Repeat("x", i+1)] = "v"
	}
	for _, c := range []struct {
		name  string
		err   error
		field string
	}{
		{"a key login with everything", agentaccount.CheckKeyLogin(ok), ""},
		{"a blank agent", agentaccount.CheckKeyLogin(hub.AgentKeyLogin{Agent: " ", Target: "t", Method: "m", Key: "k"}), "agent"},
		{"a target over 256 bytes", agentaccount.CheckKeyLogin(hub.AgentKeyLogin{Agent: "a", Target: strings.Repeat("t", 257), Method: "m", Key: "k"}), "target"},
		{"a blank method", agentaccount.CheckKeyLogin(hub.AgentKeyLogin{Agent: "a", Target: "t", Key: "k"}), "method"},
		{"a blank key", agentaccount.CheckKeyLogin(hub.AgentKeyLogin{Agent: "a", Target: "t", Method: "m"}), "key"},
		{"a key over 64 KiB", agentaccount.CheckKeyLogin(hub.AgentKeyLogin{Agent: "a", Target: "t", Method: "m", Key: strings.Repeat("k", 64<<10+1)}), "key"},
		{"a key of exactly 64 KiB", agentaccount.CheckKeyLogin(hub.AgentKeyLogin{Agent: "a", Target: "t", Method: "m", Key: strings.Repeat("k", 64<<10)}), ""},
		{"answers over 32 entries", agentaccount.CheckLoginStart(hub.AgentLoginStart{Agent: "a", Target: "t", Method: "m", Answers: many}), "answers"},
		{"an answer over 4,096 bytes", agentaccount.CheckLoginStart(hub.AgentLoginStart{Agent: "a", Target: "t", Method: "m", Answers: map[string]string{"k": strings.Repeat("v", 4097)}}), "answers"},
		{"an answer of 4,096 bytes", agentaccount.CheckLoginStart(hub.AgentLoginStart{Agent: "a", Target: "t", Method: "m", Answers: map[string]string{"k": strings.Repeat("v", 4096)}}), ""},
		{"a code over 8,192 bytes", agentaccount.CheckCode(strings.Repeat("c", 8193)), "code"},
		{"a blank code", agentaccount.CheckCode(""), "code"},
		{"an address over 8,192 bytes", agentaccount.CheckAddress(strings.Repeat("a", 8193)), "address"},
		{"an attemptId over 64 characters", agentaccount.CheckAttemptID(strings.Repeat("i", 65)), "attemptId"},
		{"an attemptId of 64 characters", agentaccount.CheckAttemptID(strings.Repeat("i", 64)), ""},
		{"a logout without a credential", agentaccount.CheckCredentialRef(hub.AgentCredentialRef{Agent: "a", Target: "t"}, true), "credential"},
		{"a logout without a target", agentaccount.CheckCredentialRef(hub.AgentCredentialRef{Agent: "a", Credential: "c"}, true), "target"},
		{"an activate without a target", agentaccount.CheckCredentialRef(hub.AgentCredentialRef{Agent: "a", Credential: "c"}, false), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			if c.field == "" {
				is.NoErr(c.err) // accepted
				return
			}
			is.Equal(hub.KindOf(c.err), hub.Invalid) // 400
			is.Equal(fieldOf(c.err), c.field)        // naming the field
		})
	}
}

func TestARedirectIsConfinedToTheCallbacksPortAndPath(t *testing.T) {
	const cb = "http://localhost:1455/auth/callback"
	for _, c := range []struct {
		name, address, want string
	}{
		{"the callback itself with its query", "http://localhost:1455/auth/callback?code=c&state=s", "http://localhost:1455/auth/callback?code=c&state=s"},
		{"127.0.0.1 for localhost", "http://127.0.0.1:1455/auth/callback?code=c", "http://localhost:1455/auth/callback?code=c"},
		{"[::1] for localhost", "http://[::1]:1455/auth/callback?code=c", "http://localhost:1455/auth/callback?code=c"},
		{"spaces around it", "  http://localhost:1455/auth/callback?code=c\n", "http://localhost:1455/auth/callback?code=c"},
		{"https", "https://localhost:1455/auth/callback?code=c", ""},
		{"another host", "http://example.com:1455/auth/callback?code=c", ""},
		{"a host that starts like loopback", "http://127.0.0.1.example.com:1455/auth/callback", ""},
		{"userinfo", "http://me@localhost:1455/auth/callback?code=c", ""},
		{"another port", "http://localhost:1456/auth/callback?code=c", ""},
		{"no port", "http://localhost/auth/callback?code=c", ""},
		{"another path", "http://localhost:1455/auth/callback/../admin?code=c", ""},
		{"a longer path", "http://localhost:1455/auth/callbackx?code=c", ""},
		{"a fragment", "http://localhost:1455/auth/callback?code=c#x", ""},
		{"not an address", "code=c", ""},
		{"a relative address", "/auth/callback?code=c", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			got, err := agentaccount.CheckRedirect(cb, c.address)
			if c.want == "" {
				is.Equal(fieldOf(err), "address")                                     // refused on the address
				is.True(!strings.Contains(err.Error(), strings.TrimSpace(c.address))) // never repeating it
				return
			}
			is.NoErr(err)         // accepted
			is.Equal(got, c.want) // the callback's own host, the pasted query
		})
	}
}

func TestARedirectLoginIsOnlyOneWhoseCallbackIsLoopbackHTTP(t *testing.T) {
	is := is.New(t)
	is.Equal(agentaccount.CompletionOf("https://auth.example/a?redirect_uri=http%3A%2F%2Flocalhost%3A1455%2Fcb", false), hub.CompletionRedirect) // loopback http
	is.Equal(agentaccount.CompletionOf("https://auth.example/a?redirect_uri=https%3A%2F%2Fauth.example%2Fcb", false), hub.CompletionDevice)      // the provider's own page
	is.Equal(agentaccount.CompletionOf("https://auth.example/a", true), hub.CompletionCode)                                                      // the agent expects a code
	_, err := agentaccount.CheckRedirect("https://auth.example/cb", "http://localhost/cb")
	is.Equal(fieldOf(err), "address") // a login without a loopback callback takes no address
}

func TestTheRedactorReplacesEchoedSecretsItNeverHolds(t *testing.T) {
	is := is.New(t)
	var r agentaccount.Redactor
	r.Add("sk-secret-1234")
	r.Add("abc")                                                                                                       // too short to search for
	is.Equal(r.Redact("the key sk-secret-1234 is wrong; sk-secret-1234!"), "the key [redacted] is wrong; [redacted]!") // every echo
	is.Equal(r.Redact("abc"), "abc")                                                                                   // short secrets are left
	long := r.Redact(strings.Repeat("x", 5000))
	is.True(len(long) <= agentaccount.MaxMessage+len("…")) // messages are cut
}

func FuzzCheckRedirect(f *testing.F) {
	const cb = "http://localhost:1455/auth/callback"
	// Every refusal's message, one probe per reason: a refusal's text
	// never depends on what was pasted, so it cannot repeat it.
	refusals := map[string]bool{}
	for _, probe := range [][2]string{
		{"https://auth.example/cb", "http://localhost/cb"}, {cb, strings.Repeat("a", agentaccount.MaxAddress+1)},
		{cb, "code=c"}, {cb, "https://localhost:1455/auth/callback"}, {cb, "http://u@localhost:1455/auth/callback"},
		{cb, "http://example.com:1455/auth/callback"}, {cb, "http://localhost:1/auth/callback"},
		{cb, "http://localhost:1455/x"}, {cb, "http://localhost:1455/auth/callback#f"},
	} {
		_, err := agentaccount.CheckRedirect(probe[0], probe[1])
		if err == nil {
			f.Fatalf("probe %q accepted", probe[1])
		}
		refusals[err.Error()] = true
	}
	f.Add(cb, "http://127.0.0.1:1455/auth/callback?code=c")
	f.Add("http://127.0.0.1:8085/oauth2callback", "http://[::1]:8085/oauth2callback?code=x&state=y")
	f.Add("http://localhost:1455/cb", "http://localhost:1455/cb/../x")
	f.Fuzz(func(t *testing.T, callback, address string) {
		got, err := agentaccount.CheckRedirect(callback, address)
		if err != nil {
			if !refusals[err.Error()] {
				t.Fatalf("a refusal outside the fixed set (it may repeat the address): %v", err)
			}
			return
		}
		// Accepted: what is requested is on the callback's host, port and path.
		again, err := agentaccount.CheckRedirect(callback, got)
		if err != nil || again != got {
			t.Fatalf("the address to request (%q) is not itself confined: %v", got, err)
		}
		if !strings.HasPrefix(got, "http://") {
			t.Fatalf("not http: %q", got)
		}
	})
}
