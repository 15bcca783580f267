package clone

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// MaxURLBytes bounds a clone URL (UTF-8 bytes): far beyond any real
// remote, small enough that a URL is never a memory or log burden.
const MaxURLBytes = 8192

// Transport is how Git reaches a clone's source, as far as a credential is
// concerned: a Hub-held SSH key serves ssh, a token serves https, and
// nothing serves the rest (plain http, git://, file:// and local paths).
type Transport string

// The transports.
const (
	TransportSSH   Transport = "ssh"
	TransportHTTPS Transport = "https"
	TransportOther Transport = "other"
)

// Source is a checked clone URL.
type Source struct {
	// URL is what Git is given (after "--"): the input trimmed, its
	// scheme lower-cased (a phone's keyboard capitalizes "Https://",
	// which Git would take for a remote helper's name).
	URL       string
	Transport Transport
	// Host is the remote's host for ssh and https, "" for other. When
	// Assignable it is credential.NormalizeHost's form (an explicit port
	// kept); otherwise it is an SSH alias or a name NormalizeHost refuses,
	// lower-cased: a clone-only host no assignment can name.
	Host       string
	Assignable bool
}

// The refusals of CheckURL. None quotes the URL: it may carry a password.
var (
	errURLRequired    = hub.Errorf(hub.Invalid, "a git clone URL is required")
	errURLLong        = hub.Errorf(hub.Invalid, "clone URL must be at most %d bytes", MaxURLBytes)
	errURLUTF8        = hub.Errorf(hub.Invalid, "clone URL must be valid UTF-8")
	errURLControl     = hub.Errorf(hub.Invalid, "clone URL must not contain control or format characters")
	errURLDash        = hub.Errorf(hub.Invalid, "clone URL must not start with '-'")
	errURLHelper      = hub.Errorf(hub.Invalid, "clone URL must not name a Git remote helper (<transport>::<address>)")
	errURLCredentials = hub.Errorf(hub.Invalid, "clone URL must not contain embedded credentials")
	errURLForm        = hub.Errorf(hub.Invalid, "clone URL must be https://, http://, ssh://, git+ssh://, git://, file://, an absolute path or [user@]host:path")
	errURLHost        = hub.Errorf(hub.Invalid, "clone URL must name a host")
	errURLHostDash    = hub.Errorf(hub.Invalid, "clone URL host and user must not start with '-'")
)

// CheckURL checks a clone URL and says how Git will reach it. raw is
// trimmed of white space; then refused (Invalid, never quoting raw):
//   - empty: "a git clone URL is required";
//   - over MaxURLBytes, invalid UTF-8, or holding a control or format
//     character (a bidi control could show a person another URL);
//   - a leading '-' (Git gets the URL after "--", and refuses it anyway);
//   - a remote helper, `<transport>::<address>` (`ext::sh -c …` runs a
//     command), and any scheme but the ones below (Git would look for a
//     remote helper of that name);
//   - user information in an http(s) URL, and a password in any URL:
//     "clone URL must not contain embedded credentials" (a token belongs
//     in a credential, not in `.git/config` where an agent reads it);
//   - a missing host, or a host or user starting with '-' (ssh would
//     read it as an option).
//
// Accepted: https://, http://, ssh://, git+ssh://, git://, file://, an
// absolute local path, and SCP-like `[user@]host:path` (host may be
// `[v6]`), told apart as Git tells them (a ':' with no '/' before it is
// SCP-like).
func CheckURL(raw string) (Source, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return Source{}, errURLRequired
	case len(s) > MaxURLBytes:
		return Source{}, errURLLong
	case !utf8.ValidString(s):
		return Source{}, errURLUTF8
	case strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) }) >= 0:
		return Source{}, errURLControl
	case s[0] == '-':
		return Source{}, errURLDash
	case isHelper(s):
		return Source{}, errURLHelper
	}
	if scheme, rest, ok := strings.Cut(s, "://"); ok && isScheme(scheme) {
		scheme = strings.ToLower(scheme)
		src := Source{URL: scheme + "://" + rest, Transport: TransportOther}
		switch scheme {
		case "file":
			return src, nil
		case "http", "https", "git", "ssh", "git+ssh":
		default:
			return Source{}, errURLForm
		}
		authority := rest
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			authority = rest[:i]
		}
		user, host, hasUser := cutLast(authority, "@")
		switch {
		case hasUser && (scheme == "http" || scheme == "https" || strings.Contains(user, ":")):
			return Source{}, errURLCredentials
		case strings.HasPrefix(user, "-") || strings.HasPrefix(host, "-"):
			return Source{}, errURLHostDash
		case host == "" || strings.HasPrefix(host, ":"):
			return Source{}, errURLHost
		}
		switch scheme {
		case "https":
			src.Transport = TransportHTTPS
		case "ssh", "git+ssh":
			src.Transport = TransportSSH
		default:
			return src, nil
		}
		src.Host, src.Assignable = sourceHost(host)
		return src, nil
	}
	if s[0] == '/' {
		return Source{URL: s, Transport: TransportOther}, nil
	}
	colon, slash := strings.IndexByte(s, ':'), strings.IndexByte(s, '/')
	if colon < 0 || (slash >= 0 && slash < colon) {
		return Source{}, errURLForm // a relative path: its meaning would be the Hub's working directory
	}
	return scpSource(s)
}

// scpSource reads `[user@]host:path`, `user@[v6]:path` and `[host]:path`
// as Git's connect.c does (host_end: brackets at the start or after "@[").
func scpSource(s string) (Source, error) {
	var user, host string
	hasUser := false
	if at := strings.Index(s, "@["); at >= 0 || s[0] == '[' {
		open := 0
		if at >= 0 {
			open = at + 1
			user, hasUser = s[:at], true
		}
		end := strings.IndexByte(s[open:], ']') + open
		if end < open || end+1 >= len(s) || s[end+1] != ':' {
			return Source{}, errURLForm
		}
		host = s[open : end+1]
		if !hasUser {
			// "[user@host]:path": Git removes the brackets.
			if u, h, ok := cutLast(host[1:len(host)-1], "@"); ok {
				user, host, hasUser = u, "["+h+"]", true
			}
		}
	} else {
		colon := strings.IndexByte(s, ':')
		user, host, hasUser = cutLast(s[:colon], "@")
		if p := s[colon+1:]; strings.Contains(p[:strings.IndexByte(p+"/", '/')], "@") {
			// "user:password@host:path": Git would ssh to "user" and
			// send the password as a path.
			return Source{}, errURLCredentials
		}
	}
	switch {
	case hasUser && strings.Contains(user, ":"):
		return Source{}, errURLCredentials
	case strings.HasPrefix(user, "-") || strings.HasPrefix(strings.TrimPrefix(host, "["), "-"):
		return Source{}, errURLHostDash
	case host == "" || host == "[]":
		return Source{}, errURLHost
	}
	src := Source{URL: s, Transport: TransportSSH}
	src.Host, src.Assignable = sourceHost(host)
	return src, nil
}

// sourceHost normalizes a remote's host (with its port, if any). A host
// NormalizeHost refuses (an SSH alias such as "github_work", a name with
// a pattern character) stays, lower-cased, a clone-only host: Git and ssh
// resolve it, but nothing can be assigned to it. A bracketed name that is
// not an IPv6 address loses its brackets, as Git removes them.
func sourceHost(host string) (string, bool) {
	if n, err := credential.NormalizeHost(host); err == nil {
		return n, true
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		inner := host[1 : len(host)-1]
		if n, err := credential.NormalizeHost(inner); err == nil {
			return n, true
		}
		host = inner
	}
	return strings.ToLower(host), false
}

// isHelper reports Git's remote-helper form: `<transport>::<address>`,
// where transport is letters, digits, '+', '-' and '.' (transport.c's
// is_urlschemechar). "::x" counts too: Git would look for a helper.
func isHelper(s string) bool {
	i := 0
	for i < len(s) && (isASCIILetter(s[i]) || i > 0 && (isDigit(s[i]) || strings.IndexByte("+-.", s[i]) >= 0)) {
		i++
	}
	return strings.HasPrefix(s[i:], "::")
}

// isScheme reports an RFC 3986 scheme: a letter, then letters, digits,
// '+', '-' and '.'.
func isScheme(s string) bool {
	if s == "" || !isASCIILetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isASCIILetter(c) && !isDigit(c) && strings.IndexByte("+-.", c) < 0 {
			return false
		}
	}
	return true
}

// cutLast cuts s around the last sep (ssh splits user@host at the last '@').
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return "", s, false
}

func isDigit(c byte) bool       { return '0' <= c && c <= '9' }
func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
