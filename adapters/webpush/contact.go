package webpush

import (
	"net"
	"net/url"
	"strings"

	"github.com/wharfhub/wharf/hub"
)

// maxContact bounds the contact: it travels in every token.
const maxContact = 512

// CheckContact reports whether c is a contact the push services take as
// a VAPID "sub": "" (push stays unconfigured), a mailto: address, or an
// https: URL. The error says what to write instead.
//
// A mailto: holds exactly one address, local@domain, unencoded: a local
// part of letters, digits and !$&'*+-/=^_`{|}~ and dots (none first,
// last or doubled), and a public DNS name, in ASCII (an internationalized
// one in its xn-- form). An https: URL has a host and no user name or
// password. Refused because Apple's push service answers 403
// BadJwtToken to them: a mailto: domain that is localhost, under
// .localhost or .local, an IP address, or a name without a dot; an https
// URL to localhost or a loopback address. Spaces and angle brackets
// ("mailto: <me@example.com>") are refused for the same reason.
func CheckContact(c string) error {
	switch {
	case c == "":
		return nil
	case len(c) > maxContact:
		return hub.Errorf(hub.Invalid, "the push contact is longer than %d characters", maxContact)
	}
	for i := range len(c) {
		if c[i] <= ' ' || c[i] >= 0x7f {
			return contactError(c, "it must be plain ASCII without spaces")
		}
	}
	switch {
	case strings.HasPrefix(c, "mailto:"):
		return checkMailto(c, c[len("mailto:"):])
	case strings.HasPrefix(c, "https:"):
		return checkHTTPS(c)
	}
	return contactError(c, "write a mailto: address or an https: URL, e.g. mailto:ops@example.com")
}

// contactError is the refusal of contact c, for the reason given.
func contactError(c, reason string) error {
	return hub.Errorf(hub.Invalid, "push contact %q: %s", c, reason)
}

// atext holds the characters of a local part besides letters, digits and
// the dot: RFC 5322's atext less those a mailto: URI would need to
// percent-encode (# % ?).
const atext = "!$&'*+-/=^_`{|}~"

func checkMailto(c, addr string) error {
	local, domain, ok := strings.Cut(addr, "@")
	if !ok || local == "" || domain == "" || strings.Contains(domain, "@") {
		return contactError(c, "a mailto: contact is one address, e.g. mailto:ops@example.com")
	}
	if strings.HasPrefix(local, ".") || strings.HasSuffix(local, ".") || strings.Contains(local, "..") {
		return contactError(c, "the address's local part must not begin or end with a dot or hold two in a row")
	}
	for _, r := range local {
		if !isAlnum(r) && r != '.' && !strings.ContainsRune(atext, r) {
			return contactError(c, "the address's local part holds a character a mailto: address cannot carry as is")
		}
	}
	d := strings.ToLower(domain)
	if strings.HasPrefix(d, "[") || net.ParseIP(d) != nil {
		return contactError(c, "the address's domain is an IP address; Apple's push service refuses it: use a domain name")
	}
	if unreachable(d) || !strings.Contains(d, ".") {
		return contactError(c, "the address's domain is not a public domain name (localhost, .localhost, .local or no dot); "+
			"Apple's push service refuses it: use an address the operator reads")
	}
	return checkDomain(c, d)
}

// checkDomain checks the shape of a DNS name (lower case, with a dot).
func checkDomain(c, d string) error {
	if len(d) > 253 {
		return contactError(c, "the domain is longer than 253 characters")
	}
	labels := strings.Split(d, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return contactError(c, "the domain is not a valid domain name")
		}
		for _, r := range l {
			if !isAlnum(r) && r != '-' {
				return contactError(c, "the domain is not a valid domain name")
			}
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return contactError(c, "the domain is not a valid domain name")
	}
	return nil
}

func checkHTTPS(c string) error {
	u, err := url.Parse(c)
	if err != nil || u.Opaque != "" || u.Host == "" {
		return contactError(c, "an https: contact is a URL with a host, e.g. https://example.com/contact")
	}
	if u.User != nil {
		return contactError(c, "an https: contact must not carry a user name or password")
	}
	host := strings.ToLower(u.Hostname())
	if ip := net.ParseIP(host); ip != nil && (ip.IsLoopback() || ip.IsUnspecified()) || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return contactError(c, "the URL's host is this machine; Apple's push service refuses it: use a public address")
	}
	return nil
}

// unreachable reports whether the (lower-case) domain d names this
// machine or its local network only.
func unreachable(d string) bool {
	return d == "localhost" || strings.HasSuffix(d, ".localhost") || d == "local" || strings.HasSuffix(d, ".local")
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}
