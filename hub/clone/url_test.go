package clone_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/clone"
)

// refused asserts err is an error of kind k with message msg, or nil when
// msg is "".
func refused(is *is.I, err error, k hub.Kind, msg string) {
	is.Helper()
	if msg == "" {
		is.NoErr(err) // accepted
		return
	}
	is.Equal(hub.KindOf(err), k)      // refused with its kind
	is.Equal(hub.MessageOf(err), msg) // and its message
}

// TestCloneURLsAreCheckedAndTheirTransportAndHostTold copies research
// §11.1's accepted forms and refusals, §11.3's transport rules and §12's
// host rows, one row each; the rows after them close what R4 left to Git.
func TestCloneURLsAreCheckedAndTheirTransportAndHostTold(t *testing.T) {
	const (
		required    = "a git clone URL is required"
		credentials = "clone URL must not contain embedded credentials"
		dash        = "clone URL must not start with '-'"
		helper      = "clone URL must not name a Git remote helper (<transport>::<address>)"
		control     = "clone URL must not contain control or format characters"
		form        = "clone URL must be https://, http://, ssh://, git+ssh://, git://, file://, an absolute path or [user@]host:path"
		noHost      = "clone URL must name a host"
		hostDash    = "clone URL host and user must not start with '-'"
	)
	ssh, https, other := clone.TransportSSH, clone.TransportHTTPS, clone.TransportOther
	for _, tc := range []struct {
		row, in   string
		url       string // "" means in, trimmed
		transport clone.Transport
		host      string
		clonOnly  bool // a host no assignment can name
		refusal   string
	}{
		// §11.1: the accepted forms.
		{row: "11.1 https", in: "https://github.com/me/uatu.git", transport: https, host: "github.com"},
		{row: "11.1 http is no credential's", in: "http://example.com/r.git", transport: other},
		{row: "11.1 ssh://", in: "ssh://git@github.com/me/uatu.git", transport: ssh, host: "github.com"},
		{row: "11.1 git+ssh://", in: "git+ssh://git@github.com/me/uatu.git", transport: ssh, host: "github.com"},
		{row: "11.1 git://", in: "git://example.com/r.git", transport: other},
		{row: "11.1 file://", in: "file:///srv/git/r.git", transport: other},
		{row: "11.1 an absolute local path", in: "/local/path/repo", transport: other},
		{row: "11.1 SCP-like", in: "git@github.com:me/uatu.git", transport: ssh, host: "github.com"},
		{row: "11.1 SCP-like without a user", in: "github.com:me/uatu.git", transport: ssh, host: "github.com"},
		{row: "11.1 SCP-like IPv6", in: "git@[2001:DB8::1]:r.git", transport: ssh, host: "[2001:db8::1]"},
		{row: "11.1 SCP-like IPv6 without a user", in: "[::1]:r.git", transport: ssh, host: "[::1]"},
		{row: "11.1 trimmed", in: "  https://github.com/me/uatu.git\n", url: "https://github.com/me/uatu.git", transport: https, host: "github.com"},
		// §11.1: refusals.
		{row: "11.1 empty", in: "", refusal: required},
		{row: "11.1 only white space", in: " \t ", refusal: required},
		{row: "11.1 https userinfo", in: "https://user:ghp_secret@github.com/me/r.git", refusal: credentials},
		{row: "11.1 https user only", in: "https://oauth2@github.com/me/r.git", refusal: credentials},
		{row: "11.1 http userinfo", in: "http://u:p@example.com/r.git", refusal: credentials},
		{row: "11.1 a leading -", in: "-uhttps://x/r.git", refusal: dash},
		{row: "11.1 --upload-pack", in: "--upload-pack=touch /tmp/pwned", refusal: dash},
		{row: "11.1 ext::", in: "ext::sh -c touch% /tmp/pwned", refusal: helper},
		// §11.3: the transports and hosts.
		{row: "11.3 https keeps an explicit port", in: "https://git.example.com:8443/r.git", transport: https, host: "git.example.com:8443"},
		{row: "11.3 https keeps :443", in: "https://git.example.com:443/r.git", transport: https, host: "git.example.com:443"},
		{row: "11.3 ssh:// with a port", in: "ssh://git@example.com:2222/r.git", transport: ssh, host: "example.com:2222"},
		{row: "11.3 an SSH alias is a clone-only host", in: "github_work:me/r.git", transport: ssh, host: "github_work", clonOnly: true},
		{row: "11.3 an alias is lower-cased", in: "Work_Box:r.git", transport: ssh, host: "work_box", clonOnly: true},
		// §12: hosts.
		{row: "12 an SCP trailing dot", in: "git@github.com.:org/r.git", transport: ssh, host: "github.com"},
		{row: "12 IPv6 keeps its brackets", in: "ssh://git@[::1]:22/r.git", transport: ssh, host: "[::1]:22"},
		{row: "12 upper case is lowered", in: "https://GitHub.COM/me/r.git", transport: https, host: "github.com"},
		{row: "12 a pattern host is clone-only", in: "git@*:r.git", transport: ssh, host: "*", clonOnly: true},
		// Beyond R4: what Git would otherwise decide.
		{row: "a scheme in upper case (a phone's keyboard)", in: "Https://github.com/me/r.git", url: "https://github.com/me/r.git", transport: https, host: "github.com"},
		{row: "any remote helper", in: "fd::3", refusal: helper},
		{row: "a helper with digits and dots", in: "x.y+2::addr", refusal: helper},
		{row: "an empty helper name", in: "::addr", refusal: helper},
		{row: "a host:: form is a helper to Git", in: "host::path", refusal: helper},
		{row: "an unknown scheme", in: "ftp://example.com/r.git", refusal: form},
		{row: "ssh+git is not on the list", in: "ssh+git://example.com/r.git", refusal: form},
		{row: "a relative path", in: "repo", refusal: form},
		{row: "a dot-relative path", in: "./a:b", refusal: form},
		{row: "a path with a colon after a slash is local", in: "/srv/a:b", transport: other},
		{row: "ssh with a password", in: "ssh://git:pw@example.com/r.git", refusal: credentials},
		{row: "SCP with a password", in: "git:pw@example.com:r.git", refusal: credentials},
		{row: "an @ in an SCP path before its first / reads as a password", in: "u:p@h/r.git", refusal: credentials},
		{row: "an @ in an SCP path after a / is a path", in: "host:r/a@b.git", transport: ssh, host: "host"},
		{row: "an ssh host that is an option", in: "ssh://-oProxyCommand=touch%20x/r", refusal: hostDash},
		{row: "an ssh user that is an option", in: "ssh://-oProxyCommand=x@host/r", refusal: hostDash},
		{row: "an SCP host that is an option", in: "user@-oProxyCommand=x:r", refusal: hostDash},
		{row: "an https URL without a host", in: "https:///r.git", refusal: noHost},
		{row: "only a port", in: "ssh://:22/r.git", refusal: noHost},
		{row: "an SCP URL without a host", in: "git@:r.git", refusal: noHost},
		{row: "an unclosed bracket", in: "[::1:r.git", refusal: form},
		{row: "a NUL", in: "https://github.com/r\x00.git", refusal: control},
		{row: "a newline inside", in: "https://github.com/r\n.git", refusal: control},
		{row: "a bidi override", in: "https://github.com/\u202etig.r", refusal: control},
		{row: "invalid UTF-8", in: "https://github.com/r\xff.git", refusal: "clone URL must be valid UTF-8"},
		{row: "8192 bytes", in: "/" + strings.Repeat("a", 8191), transport: other},
		{row: "8193 bytes", in: "/" + strings.Repeat("a", 8192), refusal: "clone URL must be at most 8192 bytes"},
		{row: "a path with spaces", in: "/home/me/my repo", transport: other},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			src, err := clone.CheckURL(tc.in)
			refused(is, err, hub.Invalid, tc.refusal)
			if tc.refusal != "" {
				is.Equal(src, clone.Source{})                                                    // and nothing else
				is.True(strings.TrimSpace(tc.in) == "" || !strings.Contains(err.Error(), tc.in)) // never quoting the URL
				return
			}
			want := tc.url
			if want == "" {
				want = strings.TrimSpace(tc.in)
			}
			is.Equal(src.URL, want)                                 // what Git is given
			is.Equal(src.Transport, tc.transport)                   // the transport
			is.Equal(src.Host, tc.host)                             // the host
			is.Equal(src.Assignable, tc.host != "" && !tc.clonOnly) // assignable unless clone-only
		})
	}
}
