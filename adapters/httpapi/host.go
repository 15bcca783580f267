package httpapi

import (
	"net"
	"net/netip"
	"strings"
)

// A page served from another name that resolves to the Hub's address (DNS
// rebinding) runs in the visitor's browser with that name as its origin,
// so the same-origin checks pass and it can, for instance, guess
// passwords through the visitor. What gives it away is the Host header:
// it names the attacker's host. The Hub answers only requests whose Host
// is an IP address (no page can rebind that), localhost, or a name it was
// told it answers for (Options.AllowedHosts: the public names behind a
// proxy, the names of its TLS certificate); any other gets 421.

// hostAllowed reports whether the request's Host header names the Hub.
func (a *api) hostAllowed(hostHeader string) bool {
	host := hostHeader
	if h, _, err := net.SplitHostPort(hostHeader); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return false
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	_, ok := a.hosts[host]
	return ok
}

// normalizeHosts returns the allowed names as hostAllowed compares them.
func normalizeHosts(names []string) map[string]struct{} {
	m := make(map[string]struct{}, len(names))
	for _, n := range names {
		if h, _, err := net.SplitHostPort(n); err == nil {
			n = h
		}
		n = strings.TrimSuffix(strings.ToLower(strings.Trim(n, "[]")), ".")
		if n != "" {
			m[n] = struct{}{}
		}
	}
	return m
}
