package hub

import (
	"errors"
	"strings"
	"time"
	"unicode"
)

// LoginRequest is one login attempt.
type LoginRequest struct {
	Name        string
	Password    string
	DeviceLabel string // optional; derived from UserAgent when blank
	UserAgent   string
	// ClientAddr is the client's address as the transport sees it (an IP
	// address, possibly with a port); the limits key it by IPv4 address
	// or IPv6 /64 prefix.
	ClientAddr string
	// DeviceToken is what an earlier login of this device returned as
	// LoginResult.DeviceToken, if anything.
	DeviceToken string
}

// LoginResult is a successful login: the new session and its secret id,
// which the caller hands to the client once and never keeps.
type LoginResult struct {
	SessionID string
	Session   DeviceSession
	// DeviceToken makes this device known to Session.User at its next
	// logins for DeviceTokenLifetime: the caller hands it to the client
	// (a cookie) and passes it back with them. Empty when none could be
	// issued.
	DeviceToken string
}

// RetryAfter reports how long the client of a refusal should wait before
// trying again (Details.RetryAfter), or zero when that is not known.
func RetryAfter(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) && e.Details != nil {
		return e.Details.RetryAfter
	}
	return 0
}

// DeviceLabelFromUserAgent derives a readable device label such as
// "Firefox on Linux" from a User-Agent header; a non-browser client is
// named by its product token ("curl"), anything else "unknown device".
func DeviceLabelFromUserAgent(ua string) string {
	browser := ""
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"CriOS/", "Chrome"},
		{"Chrome/", "Chrome"}, {"Safari/", "Safari"},
	} {
		if strings.Contains(ua, b.token) {
			browser = b.name
			break
		}
	}
	if browser != "" && strings.HasPrefix(ua, "Mozilla/") {
		for _, o := range []struct{ token, name string }{
			{"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Android", "Android"}, {"CrOS", "ChromeOS"},
			{"Mac OS X", "macOS"}, {"Windows", "Windows"}, {"Linux", "Linux"},
		} {
			if strings.Contains(ua, o.token) {
				return browser + " on " + o.name
			}
		}
		return browser
	}
	product, _, _ := strings.Cut(strings.TrimSpace(ua), " ")
	product, _, _ = strings.Cut(product, "/")
	if product == "" || product == "Mozilla" || len(product) > MaxDeviceLabelLen ||
		strings.IndexFunc(product, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return "unknown device"
	}
	return product
}
