package agentaccount

import (
	"net"
	"net/url"
	"strings"

	"github.com/wharfhub/wharf/hub"
)

// MaxAddress bounds a pasted address (and a code) in bytes.
const MaxAddress = 8192

// CompletionOf decides how a browser login is finished when the agent
// does not say: a code when the agent expects one; a redirect when the
// authorize URL's redirect_uri is an http address on a loopback host
// (the Hub machine's listener, which a phone cannot reach); otherwise a
// device login, finished on the page itself.
func CompletionOf(authorizeURL string, expectsCode bool) hub.AgentLoginCompletion {
	if expectsCode {
		return hub.CompletionCode
	}
	if u, err := url.Parse(authorizeURL); err == nil {
		if cb := u.Query().Get("redirect_uri"); cb != "" {
			if c, err := url.Parse(cb); err == nil && c.Scheme == "http" && loopback(c.Hostname()) {
				return hub.CompletionRedirect
			}
		}
	}
	return hub.CompletionDevice
}

// CallbackOf is the redirect_uri of an authorize URL: the callback a
// redirect login records; "" when there is none.
func CallbackOf(authorizeURL string) string {
	u, err := url.Parse(authorizeURL)
	if err != nil {
		return ""
	}
	return u.Query().Get("redirect_uri")
}

// CheckRedirect confines a pasted address to the attempt's own callback
// and returns the address to request: `http:` on a loopback host
// (localhost, 127.0.0.1, [::1]: any spelling of loopback), no userinfo,
// the callback's port and path exactly, the pasted query kept; the host
// requested is the callback's own. A refusal is Invalid with field
// "address" and never repeats the address (or any part of it).
func CheckRedirect(callback, address string) (string, error) {
	refuse := func(why string) (string, error) {
		return "", &hub.Error{Kind: hub.Invalid, Message: why, Details: &hub.Details{Field: "address"}}
	}
	cb, err := url.Parse(callback)
	if err != nil || cb.Scheme != "http" || !loopback(cb.Hostname()) || cb.User != nil {
		return refuse("This login does not finish with an address.")
	}
	if len(address) > MaxAddress {
		return refuse("The address is too long.")
	}
	address = strings.TrimSpace(address)
	u, err := url.Parse(address)
	switch {
	case err != nil || !u.IsAbs() || u.Opaque != "":
		return refuse("That is not the address the browser landed on: paste the whole address from the address bar.")
	case u.Scheme != "http":
		return refuse("The address must start with http:// (the login's listener on the Hub machine).")
	case u.User != nil:
		return refuse("The address must not carry a user name or password.")
	case !loopback(u.Hostname()):
		return refuse("The address must be on localhost: the login's listener on the Hub machine.")
	case port(u) != port(cb):
		return refuse("The address's port is not this login's.")
	case u.EscapedPath() != cb.EscapedPath():
		return refuse("The address's path is not this login's.")
	case u.Fragment != "":
		// A fragment never reaches a server; one here means the pasted
		// text is not a redirect the listener sent.
		return refuse("The address must not carry a fragment (#…).")
	}
	out := url.URL{Scheme: "http", Host: cb.Host, Path: cb.Path, RawPath: cb.RawPath, RawQuery: u.RawQuery}
	return out.String(), nil
}

// loopback reports whether host names the loopback interface: localhost
// or a loopback IP literal.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// port is u's port, the scheme's default when absent.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	return "80"
}
