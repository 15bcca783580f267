package credential_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// TestHostsAreNormalizedAsTheEarlierSystemPinnedThem copies research §2.4
// (its five rules and the outputs its tests pin), §12's host row and the
// issue's bad hosts, one row each; the rows after them close what §2.4
// left open.
func TestHostsAreNormalizedAsTheEarlierSystemPinnedThem(t *testing.T) {
	const (
		empty    = "host must not be empty"
		space    = "host must not contain white space or control characters"
		scheme   = "host must be an https host"
		userinfo = "host must not contain user information"
		query    = "host must not contain a query or fragment"
		path     = "host must not contain a path"
		port     = "host port must be a number from 1 to 65535"
		literal  = "host must be a literal DNS name or IP address, not a pattern"
		ipv6     = "an IPv6 host must be in brackets, without a zone"
		long     = "host must be at most 256 bytes"
	)
	for _, tc := range []struct {
		row, in, want, refusal string
	}{
		// §2.4 rule 1: empty, surrounding or inner white space, NUL.
		{row: "2.4/1 empty", in: "", refusal: empty},
		{row: "2.4/1 leading white space", in: " github.com", refusal: space},
		{row: "2.4/1 trailing white space", in: "github.com ", refusal: space},
		{row: "2.4/1 a trailing newline", in: "github.com\n", refusal: space},
		{row: "2.4/1 inner white space", in: "git hub.com", refusal: space},
		{row: "2.4/1 NUL", in: "github.com\x00", refusal: space},
		// §2.4 rule 2: parsed as a URL, https:// prefixed when there is no
		// scheme; https only; no userinfo, query, fragment or path but "/".
		{row: "2.4/2 a bare host", in: "github.com", want: "github.com"},
		{row: "2.4/2 an https URL", in: "https://github.com", want: "github.com"},
		{row: "2.4/2 an https URL with /", in: "https://github.com/", want: "github.com"},
		{row: "2.4/2 the scheme in upper case", in: "HTTPS://github.com", want: "github.com"},
		{row: "2.4/2 http", in: "http://github.com", refusal: scheme},
		{row: "2.4/2 ssh", in: "ssh://github.com", refusal: scheme},
		{row: "2.4/2 git+ssh", in: "git+ssh://github.com", refusal: scheme},
		{row: "2.4/2 userinfo", in: "https://git@github.com", refusal: userinfo},
		{row: "2.4/2 userinfo without a scheme", in: "git@github.com", refusal: userinfo},
		{row: "2.4/2 a query", in: "https://github.com?x=1", refusal: query},
		{row: "2.4/2 an empty query after /", in: "https://github.com/?", refusal: query},
		{row: "2.4/2 a fragment", in: "https://github.com#top", refusal: query},
		{row: "2.4/2 a path", in: "https://github.com/org/repo", refusal: path},
		{row: "2.4/2 a path without a scheme", in: "github.com/org", refusal: path},
		{row: "2.4/2 two slashes", in: "https://github.com//", refusal: path},
		// §2.4 rule 3: one trailing dot stripped, lower case.
		{row: "2.4/3 GitHub.COM. (pinned)", in: "GitHub.COM.", want: "github.com"},
		{row: "2.4/3 only one trailing dot", in: "github.com..", refusal: literal},
		{row: "2.4/3 a lone dot", in: ".", refusal: empty},
		// §2.4 rule 4: a literal DNS name or a bracketed IPv6 literal.
		{row: "2.4/4 a single label", in: "gitlab", want: "gitlab"},
		{row: "2.4/4 inner hyphens", in: "my-git.example-host.com", want: "my-git.example-host.com"},
		{row: "2.4/4 a leading hyphen", in: "-github.com", refusal: literal},
		{row: "2.4/4 a trailing hyphen in a label", in: "github-.com", refusal: literal},
		{row: "2.4/4 an underscore", in: "git_hub.com", refusal: literal},
		{row: "2.4/4 an empty label", in: "github..com", refusal: literal},
		{row: "2.4/4 a leading dot", in: ".github.com", refusal: literal},
		{row: "2.4/4 IPv6 in brackets", in: "[2001:DB8::1]", want: "[2001:db8::1]"},
		{row: "2.4/4 IPv6 made canonical", in: "[2001:0db8:0:0:0:0:0:0001]", want: "[2001:db8::1]"},
		{row: "2.4/4 IPv6 loopback", in: "https://[0:0:0:0:0:0:0:1]/", want: "[::1]"},
		{row: "2.4/4 IPv6 without brackets", in: "2001:db8::1", refusal: ipv6},
		{row: "2.4/4 IPv6 with a zone", in: "[fe80::1%eth0]", refusal: ipv6},
		{row: "2.4/4 IPv6 with an escaped zone", in: "[fe80::1%25eth0]", refusal: ipv6},
		{row: "2.4/4 IPv4 in brackets", in: "[192.0.2.1]", refusal: ipv6},
		{row: "2.4/4 an unclosed bracket", in: "[::1", refusal: literal},
		{row: "2.4/4 something after the bracket", in: "[::1]x", refusal: literal},
		// §2.4 rule 5: an explicit port is kept, :443 and 0443 included.
		{row: "2.4/5 a port", in: "example.com:2222", want: "example.com:2222"},
		{row: "2.4/5 :443 kept", in: "example.com:443", want: "example.com:443"},
		{row: "2.4/5 ssh.example.com.:0443 (pinned)", in: "ssh.example.com.:0443", want: "ssh.example.com:443"},
		{row: "2.4/5 https://ssh.example.com:443/ (pinned)", in: "https://ssh.example.com:443/", want: "ssh.example.com:443"},
		{row: "2.4/5 IPv6 with a port", in: "[::1]:2222", want: "[::1]:2222"},
		{row: "2.4/5 an empty port is none", in: "example.com:", want: "example.com"},
		{row: "2.4/5 port 0", in: "example.com:0", refusal: port},
		{row: "2.4/5 port 0000", in: "example.com:0000", refusal: port},
		{row: "2.4/5 port 65535", in: "example.com:65535", want: "example.com:65535"},
		{row: "2.4/5 port 65536", in: "example.com:65536", refusal: port},
		{row: "2.4/5 a very long port", in: "example.com:" + strings.Repeat("9", 40), refusal: port},
		{row: "2.4/5 a named port", in: "example.com:https", refusal: port},
		{row: "2.4/5 a signed port", in: "example.com:+22", refusal: port},
		{row: "2.4/5 two ports", in: "example.com:22:33", refusal: literal},
		// §12 and the issue: patterns and credentials are refused.
		{row: "12 *", in: "*", refusal: literal},
		{row: "12 *.example.com", in: "*.example.com", refusal: literal},
		{row: "12 git?example.com", in: "git?example.com", refusal: query},
		{row: "12 github.com*", in: "github.com*", refusal: literal},
		{row: "12 IPv6 keeps its brackets", in: "[::1]", want: "[::1]"},
		{row: "12 the SCP trailing dot gives github.com", in: "github.com.", want: "github.com"},
		{row: "issue a b", in: "a b", refusal: space},
		{row: "issue https://u:p@h", in: "https://u:p@h", refusal: userinfo},
		// Beyond §2.4: what else ssh_config or a resolver reads specially.
		{row: "a negation", in: "!github.com", refusal: literal},
		{row: "a pattern list", in: "github.com,gitlab.com", refusal: literal},
		{row: "a percent token", in: "%h", refusal: literal},
		{row: "a quote", in: `"github.com"`, refusal: literal},
		{row: "a backslash", in: `github.com\`, refusal: literal},
		{row: "a comment", in: "github.com#x", refusal: query},
		{row: "an equals sign", in: "host=github.com", refusal: literal},
		{row: "a tab", in: "github.com\t", refusal: space},
		{row: "a no-break space", in: "github.com\u00a0", refusal: space},
		{row: "a zero-width space", in: "git\u200bhub.com", refusal: space},
		{row: "the Kelvin sign is not folded into k", in: "\u212aey.example", refusal: literal},
		{row: "a non-ASCII name", in: "bücher.example", refusal: literal},
		{row: "invalid UTF-8", in: "github\xff.com", refusal: literal},
		{row: "IPv4", in: "192.0.2.1", want: "192.0.2.1"},
		{row: "IPv4 with a trailing dot and a port", in: "192.0.2.1.:22", want: "192.0.2.1:22"},
		{row: "IPv4 with a leading zero (octal to a resolver)", in: "010.0.0.1", refusal: literal},
		{row: "a short IPv4 form", in: "127.1", refusal: literal},
		{row: "an all-digit name", in: "12345", refusal: literal},
		{row: "an all-digit label inside", in: "123.example.com", want: "123.example.com"},
		{row: "a label of 63", in: strings.Repeat("a", 63) + ".com", want: strings.Repeat("a", 63) + ".com"},
		{row: "a label of 64", in: strings.Repeat("a", 64) + ".com", refusal: literal},
		{row: "a name of 253", in: strings.Repeat("a.", 126) + "a", want: strings.Repeat("a.", 126) + "a"},
		{row: "a name of 253 and its trailing dot", in: strings.Repeat("a.", 127), want: strings.Repeat("a.", 126) + "a"},
		{row: "a name of 255", in: strings.Repeat("a.", 127) + "a", refusal: literal},
		{row: "257 bytes", in: strings.Repeat("a", 257), refusal: long},
		{row: "a scheme-relative URL", in: "//github.com", refusal: path},
		{row: "no host after the scheme", in: "https://", refusal: empty},
		{row: "only a port", in: "https://:443", refusal: empty},
		{row: "a host followed by a scheme-like path", in: "h/x://y", refusal: path},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			got, err := credential.NormalizeHost(tc.in)
			if tc.refusal != "" {
				is.Equal(hub.KindOf(err), hub.Invalid)   // refused as invalid
				is.Equal(hub.MessageOf(err), tc.refusal) // with its message
				is.Equal(got, "")                        // and no host
				is.True(!quotes(err, tc.in))             // never quoting the input
				return
			}
			is.NoErr(err)          // accepted
			is.Equal(got, tc.want) // in its one stored form
		})
	}
}
