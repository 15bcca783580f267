package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/wharfhub/wharf/hub"
)

// CookiePrefix is Wharf's neutral cookie prefix (<service> in the spec).
const CookiePrefix = "wharf"

// isHTTPS reports whether the client reached the Hub over TLS: terminated
// here, or by a fronting proxy that says so. The proxy header can only add
// security (the Secure flag), never remove it.
func isHTTPS(r *http.Request) bool {
	return r.TLS != nil || strings.Contains(strings.ToLower(r.Header.Get("X-Forwarded-Proto")), "https")
}

// CookieName returns the session cookie name for a request: wharf_hub at
// the scheme's default port, wharf_hub_<port> at any other port of the
// request's Host. Cookies are not isolated by port, so two Hubs on one
// host would otherwise overwrite each other's sessions.
// (A Hub with a public URL names its cookies by api.cookieName, which
// also knows the public URL's scheme.)
func CookieName(r *http.Request) string { return portCookieName(r, "hub", isHTTPS(r)) }

// cookieName is CookieName with the public URL's scheme.
func (a *api) cookieName(r *http.Request) string { return portCookieName(r, "hub", a.isHTTPS(r)) }

// deviceCookieName returns the device cookie name for a request, by the
// session cookie's rule: wharf_device or wharf_device_<port>.
func (a *api) deviceCookieName(r *http.Request) string {
	return portCookieName(r, "device", a.isHTTPS(r))
}

// portCookieName returns <prefix>_<kind>, with _<port> unless the
// request's Host names the scheme's default port.
func portCookieName(r *http.Request, kind string, https bool) string {
	name := CookiePrefix + "_" + kind
	_, port, err := net.SplitHostPort(r.Host)
	if err != nil || port == "" {
		return name
	}
	if (port == "443" && https) || (port == "80" && !https) {
		return name
	}
	return name + "_" + port
}

// cookieValue returns the value of the cookie named name, or "".
func cookieValue(r *http.Request, name string) string {
	for _, c := range r.Cookies() {
		if c.Name == name && c.Value != "" {
			return c.Value
		}
	}
	return ""
}

// deviceSessionCookie returns the value of this port's session cookie, or "".
// A cookie under another port's name, or a bare name at a non-default port,
// is ignored.
func (a *api) deviceSessionCookie(r *http.Request) string { return cookieValue(r, a.cookieName(r)) }

func (a *api) setDeviceSessionCookie(w http.ResponseWriter, r *http.Request, id string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: a.cookieName(r), Value: id, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: a.isHTTPS(r)})
}

func (a *api) clearDeviceSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: a.cookieName(r), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: a.isHTTPS(r)})
}

// The device cookie holds the device token a successful login issues
// (hub.LoginResult.DeviceToken): presented with the next logins of the
// same user, it makes the device known, which a name under attack does
// not slow down. It is no credential, so it outlives the sessions, and
// sign-out leaves it. Only the login reads it, so it is scoped to
// deviceCookiePath and no other request carries it.
const deviceCookiePath = "/login"

// deviceCookie returns the value of this port's device cookie, or "".
func (a *api) deviceCookie(r *http.Request) string { return cookieValue(r, a.deviceCookieName(r)) }

func (a *api) setDeviceCookie(w http.ResponseWriter, r *http.Request, token string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: a.deviceCookieName(r), Value: token, Path: deviceCookiePath, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: a.isHTTPS(r)})
}

// bearerToken returns the credential of an "Authorization: Bearer" header
// and whether such a header was present. Other schemes are not bearer.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// authenticate resolves the request's session. A bearer credential wins
// over the cookie, and a bad bearer never falls back to the cookie.
func (a *api) authenticate(r *http.Request) (s hub.DeviceSession, viaCookie bool, err error) {
	if token, ok := bearerToken(r); ok {
		s, err = a.auth.Authenticate(r.Context(), token)
		return s, false, err
	}
	if id := a.deviceSessionCookie(r); id != "" {
		s, err = a.auth.Authenticate(r.Context(), id)
		return s, true, err
	}
	return hub.DeviceSession{}, false, hub.Errorf(hub.Unauthenticated, "authentication required")
}

// sameOrigin is the spec's same-origin check: it fails when Sec-Fetch-Site
// is present and neither same-origin nor none, or when Origin names another
// host or port than the request's Host (default ports normalized). A
// request with neither header (a non-browser client) passes.
//
// The scheme is not compared: behind a TLS proxy that does not send
// X-Forwarded-Proto the Hub cannot know it, and no other server can answer
// at the Hub's own host and port.
func sameOrigin(r *http.Request) bool {
	if sfs := r.Header.Get("Sec-Fetch-Site"); sfs != "" && sfs != "same-origin" && sfs != "none" {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.User != nil {
		return false
	}
	return hostPort(u.Host, u.Scheme) == hostPort(r.Host, u.Scheme)
}

// hostPort normalizes host[:port] to lower-case host and explicit port,
// supplying scheme's default port.
func hostPort(hp, scheme string) string {
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		host, port = strings.Trim(hp, "[]"), ""
	}
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return strings.ToLower(host) + "|" + port
}

// clientAddr is the client address the login limits count (the core
// keys it by IPv4 address or IPv6 /64 prefix): the peer address or, when
// the peer is a trusted proxy, the last X-Forwarded-For hop (the one that
// proxy appended; earlier hops are what the client claimed).
func (a *api) clientAddr(r *http.Request) string {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		if r.RemoteAddr == "" {
			return "unknown"
		}
		return r.RemoteAddr
	}
	ip := peer.Addr().Unmap()
	if a.trusted(ip) {
		if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			hops := strings.Split(xff[len(xff)-1], ",")
			if last := strings.TrimSpace(hops[len(hops)-1]); last != "" {
				return last
			}
		}
	}
	return ip.String()
}

func (a *api) trusted(ip netip.Addr) bool {
	for _, p := range a.proxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
