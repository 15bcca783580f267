package daemon

import (
	"fmt"
	"net/url"
	"strings"
)

// ParsePublicURL reads a public URL (Config.PublicURL): http or https,
// a host (and a port when not the scheme's default), nothing else. The
// Hub owns its absolute paths (/login, /api/..., /s/...), so it cannot be
// served under a path prefix, and a URL with one is refused rather than
// half working.
func ParsePublicURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL", s)
	}
	if err := checkPublicURL(u); err != nil {
		return nil, err
	}
	return &url.URL{Scheme: u.Scheme, Host: strings.ToLower(u.Host)}, nil
}

func checkPublicURL(u *url.URL) error {
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Errorf("%q: want https://HOST (or http://HOST)", u.String())
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("%q: no host", u.String())
	case u.User != nil:
		return fmt.Errorf("%q: a public URL holds no user or password", u.Redacted())
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return fmt.Errorf("%q: the Hub cannot be served under a path; give the scheme and host only", u.String())
	}
	return nil
}
