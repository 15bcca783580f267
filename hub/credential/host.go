package credential

import (
	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// MaxHostBytes bounds a host as sent (CredentialHost's maxLength).
const MaxHostBytes = 256

// The refusals of NormalizeHost. None quotes the input: a refused host may
// carry a password (https://user:password@host).
var (
	errHostEmpty    = hub.Errorf(hub.Invalid, "host must not be empty")
	errHostLong     = hub.Errorf(hub.Invalid, "host must be at most %d bytes", MaxHostBytes)
	errHostSpace    = hub.Errorf(hub.Invalid, "host must not contain white space or control characters")
	errHostScheme   = hub.Errorf(hub.Invalid, "host must be an https host")
	errHostUserinfo = hub.Errorf(hub.Invalid, "host must not contain user information")
	errHostQuery    = hub.Errorf(hub.Invalid, "host must not contain a query or fragment")
	errHostPath     = hub.Errorf(hub.Invalid, "host must not contain a path")
	errHostPort     = hub.Errorf(hub.Invalid, "host port must be a number from 1 to 65535")
	errHostLiteral  = hub.Errorf(hub.Invalid, "host must be a literal DNS name or IP address, not a pattern")
	errHostIPv6     = hub.Errorf(hub.Invalid, "an IPv6 host must be in brackets, without a zone")
)

// NormalizeHost is the one rule for a Git host, on every path a host
// enters by (a token, an assignment, an unassignment, an onboarding
// selection, a clone remote): the earlier system's rule (research §2.4)
// with its holes closed. It answers the host in its one stored form —
//
//	name, name:port, [ipv6], [ipv6]:port
//
// — or an Invalid error that never quotes s.
//
// s may be a bare host or an https URL of one (the scheme in any case),
// with at most "/" after the host. Refused: empty input, white space or
// control characters anywhere, other schemes, user information, a query
// or fragment, a path, and anything but a literal host: DNS labels of
// [a-z0-9] with inner hyphens, a dotted-decimal IPv4 address, or an IPv6
// address in brackets. So a pattern (`*`, `*.example.com`, `git?x`,
// `github.com*`, `a,b`, `!a`) never reaches a generated ssh_config, where
// it would offer a key to every host it matches, and the output holds no
// character ssh_config treats specially (`*?!,%"\#=` or white space).
//
// The name is lower-cased (ASCII only: a character that lower-cases to
// ASCII, such as the Kelvin sign, is refused rather than folded into a
// name it is not) and one trailing dot is removed. An explicit port is
// kept, as a decimal without leading zeros (`:0443` gives `:443`), even
// the scheme's default: `example.com:443` and `example.com` stay distinct
// because an SSH client told "port 443" asks for exactly that block. An
// empty port (`example.com:`) is no port, as in a URL. An IPv6 address
// takes its canonical form (net/netip: lower case, zeros compressed); a
// zone is refused (it names an interface of this machine, and `%` is
// ssh_config's token character). A name whose last label is all digits
// must be a dotted-decimal IPv4 address (so `010.1.1.1`, which a resolver
// may read as octal, and `127.1` are refused).
//
// NormalizeHost(NormalizeHost(s)) is NormalizeHost(s).
func NormalizeHost(s string) (string, error) {
	switch {
	case s == "":
		return "", errHostEmpty
	case len(s) > MaxHostBytes:
		return "", errHostLong
	case !utf8.ValidString(s):
		return "", errHostLiteral
	case strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r)
	}) >= 0:
		return "", errHostSpace
	}
	rest := s
	if scheme, after, ok := strings.Cut(s, "://"); ok && isScheme(scheme) {
		if !strings.EqualFold(scheme, "https") {
			return "", errHostScheme
		}
		rest = after
	}
	authority, tail := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}
	switch {
	case strings.Contains(authority, "@"):
		return "", errHostUserinfo
	case strings.ContainsAny(tail, "?#"):
		return "", errHostQuery
	case tail != "" && tail != "/":
		return "", errHostPath
	}
	name, port, hasPort := authority, "", false
	if strings.HasPrefix(authority, "[") {
		end := strings.IndexByte(authority, ']')
		if end < 0 {
			return "", errHostLiteral
		}
		addr, err := netip.ParseAddr(authority[1:end])
		if err != nil || !addr.Is6() || addr.Zone() != "" {
			return "", errHostIPv6
		}
		name = "[" + addr.String() + "]"
		if after := authority[end+1:]; after != "" {
			if after[0] != ':' {
				return "", errHostLiteral
			}
			port, hasPort = after[1:], true
		}
	} else {
		if i := strings.LastIndexByte(authority, ':'); i >= 0 {
			name, port, hasPort = authority[:i], authority[i+1:], true
		}
		if strings.Contains(name, ":") {
			if _, err := netip.ParseAddr(authority); err == nil {
				return "", errHostIPv6
			}
			return "", errHostLiteral
		}
		var err error
		if name, err = literalName(strings.TrimSuffix(name, ".")); err != nil {
			return "", err
		}
	}
	if name == "" {
		return "", errHostEmpty
	}
	if hasPort && port != "" {
		n, ok := portNumber(port)
		if !ok {
			return "", errHostPort
		}
		name += ":" + strconv.Itoa(n)
	}
	return name, nil
}

// isScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, "+", "-" or "."), so that "https://h" is a URL and
// "h/x://y" is a host followed by a path.
func isScheme(s string) bool {
	if s == "" || !isASCIILetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isASCIILetter(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// literalName lower-cases a DNS name and checks it: dot-separated labels
// of 1 to 63 characters from [a-z0-9-], not beginning or ending with a
// hyphen, 253 characters in all; a name whose last label is all digits
// must be a dotted-decimal IPv4 address. "" stays "" (the caller says the
// host is empty).
func literalName(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	if len(s) > 253 {
		return "", errHostLiteral
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	name := string(b)
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", errHostLiteral
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !('a' <= c && c <= 'z') && !isDigit(c) && c != '-' {
				return "", errHostLiteral
			}
		}
	}
	if last := labels[len(labels)-1]; strings.IndexFunc(last, func(r rune) bool { return !isDigit(byte(r)) }) < 0 {
		// netip accepts exactly four decimal parts without leading zeros.
		if addr, err := netip.ParseAddr(name); err != nil || !addr.Is4() {
			return "", errHostLiteral
		}
	}
	return name, nil
}

// portNumber reads a decimal port from 1 to 65535; leading zeros are
// allowed (and dropped by the caller's formatting).
func portNumber(s string) (int, bool) {
	s = strings.TrimLeft(s, "0")
	if s == "" || len(s) > 5 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n <= 65535
}

func isDigit(c byte) bool       { return '0' <= c && c <= '9' }
func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
