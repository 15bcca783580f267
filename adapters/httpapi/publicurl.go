package httpapi

import (
	"net/http"
	"net/url"
	"strings"
)

// The public URL (Options.PublicURL) is the address people type, which a
// reverse proxy in front of the Hub answers: https://hub.example.ts.net.
// A request that names its host came through that proxy, so the Hub knows
// what the proxy may not say: the scheme. Under an https public URL such
// a request gets Secure cookies and HSTS, as if the Hub had terminated TLS
// itself, and a cookie request that changes state must come from exactly
// the public origin (scheme included: a page on http:// of the same name
// is a network attacker's). The public origin is also accepted when a
// proxy rewrites Host to the Hub's own address (nginx's default), since a
// browser never lets a page forge Origin. Requests that name another host
// (a local client at 127.0.0.1) keep the rules they had.

// publicURL is Options.PublicURL, prepared for the checks above.
type publicURL struct {
	hostPort string // hostPort(host, scheme) of the URL: what a request's Host must match
	origin   string // scheme "://" hostPort: what an Origin header must match
	https    bool
}

// newPublicURL prepares u; nil stays unset.
func newPublicURL(u *url.URL) publicURL {
	if u == nil || u.Host == "" {
		return publicURL{}
	}
	scheme := strings.ToLower(u.Scheme)
	hp := hostPort(u.Host, scheme)
	return publicURL{hostPort: hp, origin: scheme + "://" + hp, https: scheme == "https"}
}

// names reports whether the request's Host header names the public URL's
// host and port.
func (p publicURL) names(host string) bool {
	return p.hostPort != "" && hostPort(host, p.scheme()) == p.hostPort
}

func (p publicURL) scheme() string {
	if p.https {
		return "https"
	}
	return "http"
}

// isHTTPS reports whether the client reached the Hub over TLS: terminated
// here, by a proxy that says so (X-Forwarded-Proto), or by the proxy of an
// https public URL the request names.
func (a *api) isHTTPS(r *http.Request) bool {
	return isHTTPS(r) || (a.public.https && a.public.names(r.Host))
}

// sameOrigin is the spec's same-origin check (see sameOrigin) with the
// public URL's rules above.
func (a *api) sameOrigin(r *http.Request) bool {
	if a.public.hostPort == "" {
		return sameOrigin(r)
	}
	if sfs := r.Header.Get("Sec-Fetch-Site"); sfs != "" && sfs != "same-origin" && sfs != "none" {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if originKey(origin) == a.public.origin {
		return true
	}
	if a.public.names(r.Host) {
		return false // the public host's only origin is the public origin
	}
	return sameOrigin(r)
}

// originKey normalizes an Origin header as publicURL.origin is, or
// returns "" for one that is not a bare http(s) origin.
func originKey(origin string) string {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.User != nil {
		return ""
	}
	return u.Scheme + "://" + hostPort(u.Host, u.Scheme)
}
