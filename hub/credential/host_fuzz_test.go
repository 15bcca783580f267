package credential_test

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// FuzzNormalizeHost checks NormalizeHost's promises on any input: it
// refuses with an Invalid error that never quotes the input, or answers a
// host that normalizes to itself, holds only [a-z0-9.:[]-] (nothing an
// ssh_config Host or Match pattern, a token expansion or a quoted
// argument treats specially), and reads back as a name or a bracketed
// IPv6 address with an optional port from 1 to 65535.
func FuzzNormalizeHost(f *testing.F) {
	for _, s := range []string{
		"github.com", "GitHub.COM.", "ssh.example.com.:0443", "https://ssh.example.com:443/",
		"[2001:DB8::1]:22", "[::ffff:192.0.2.1]", "192.0.2.1", "*", "*.example.com",
		"git?example.com", "github.com*", "a b", "https://u:p@h", "[fe80::1%25eth0]",
		"example.com:", "\u212aey.example", "010.0.0.1", "h/x://y", "https://",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := credential.NormalizeHost(s)
		if err != nil {
			if hub.KindOf(err) != hub.Invalid || hub.MessageOf(err) == "" {
				t.Fatalf("NormalizeHost(%q) failed with %v, not an Invalid error with a message", s, err)
			}
			if quotes(err, s) {
				t.Fatalf("NormalizeHost(%q)'s refusal quotes its input: %v", s, err)
			}
			return
		}
		again, err := credential.NormalizeHost(got)
		if err != nil || again != got {
			t.Fatalf("NormalizeHost(%q) = %q, which normalizes to %q, %v", s, got, again, err)
		}
		if len(got) == 0 || len(got) > credential.MaxHostBytes {
			t.Fatalf("NormalizeHost(%q) = %q: length out of bounds", s, got)
		}
		for i := 0; i < len(got); i++ {
			c := got[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte(".:[]-", c) >= 0) {
				t.Fatalf("NormalizeHost(%q) = %q, holding %q", s, got, c)
			}
		}
		name, port := got, ""
		if strings.HasPrefix(got, "[") {
			end := strings.IndexByte(got, ']')
			addr, err := netip.ParseAddr(got[1:end])
			if err != nil || !addr.Is6() || addr.String() != got[1:end] {
				t.Fatalf("NormalizeHost(%q) = %q: not a canonical IPv6 address in brackets", s, got)
			}
			name = got[:end+1]
			if rest := got[end+1:]; rest != "" {
				port = strings.TrimPrefix(rest, ":")
			}
		} else if i := strings.IndexByte(got, ':'); i >= 0 {
			name, port = got[:i], got[i+1:]
		}
		if name == "" || strings.HasSuffix(name, ".") || strings.HasPrefix(name, ".") || strings.Contains(name, "..") {
			t.Fatalf("NormalizeHost(%q) = %q: the name is empty or has an empty label", s, got)
		}
		if port != "" {
			n, err := strconv.Atoi(port)
			if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
				t.Fatalf("NormalizeHost(%q) = %q: the port is not a canonical number from 1 to 65535", s, got)
			}
		}
	})
}

// quotes reports whether err's text holds s, when s could not be there by
// chance: it has a character none of the fixed refusals has (only
// letters, digits, spaces, commas and dots do).
func quotes(err error, s string) bool {
	plain := func(r rune) bool {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == ' ' || r == ',' || r == '.'
	}
	return strings.IndexFunc(s, func(r rune) bool { return !plain(r) }) >= 0 && strings.Contains(err.Error(), s)
}
