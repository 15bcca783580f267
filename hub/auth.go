package hub

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// LoginLimits bound failed logins. A zero field takes its default.
type LoginLimits struct {
	PerAddress    int           // failures per client address per AddressWindow; default 5
	AddressWindow time.Duration // default 1 minute
	PerName       int           // failures per user name per NameWindow; default 20
	NameWindow    time.Duration // default 15 minutes
	MaxKeys       int           // keys per limiter table, default 10,000; a full table refuses new keys
}

// LoginRequest is one login attempt.
type LoginRequest struct {
	Name        string
	Password    string
	DeviceLabel string // optional; derived from UserAgent when blank
	UserAgent   string
	ClientAddr  string // the key of the per-address limiter
}

// LoginResult is a successful login: the new session and its secret id,
// which the caller hands to the client once and never keeps.
type LoginResult struct {
	SessionID string
	Session   DeviceSession
}

var (
	errTooManyAttempts    = Errorf(RateLimited, "too many attempts — wait a minute and try again")
	errInvalidCredentials = Errorf(Unauthenticated, "invalid credentials")
)

// CheckLoginRate reports a RateLimited error when the client address has
// spent its budget of failed logins. Transports call it before they read the
// request body; Login checks again.
func (h *Hub) CheckLoginRate(clientAddr string) error {
	if ok, _ := h.addrLimit.Check(clientAddr, h.clock.Now()); !ok {
		return errTooManyAttempts
	}
	return nil
}

// Login verifies a name and password and opens a device session.
//
// Order: input validation (Invalid), the per-address then per-name failure
// budgets (RateLimited, before any hash is computed), then one password
// verification, also for an unknown name, so the answer and its cost do
// not reveal which names exist (Unauthenticated "invalid credentials").
func (h *Hub) Login(ctx context.Context, req LoginRequest) (LoginResult, error) {
	label, err := validateLogin(req)
	if err != nil {
		return LoginResult{}, err
	}
	if label == "" {
		label = DeviceLabelFromUserAgent(req.UserAgent)
	}
	now := h.clock.Now()
	if ok, _ := h.addrLimit.Reserve(req.ClientAddr, now); !ok {
		return LoginResult{}, errTooManyAttempts
	}
	if ok, _ := h.nameLimit.Reserve(req.Name, now); !ok {
		h.addrLimit.Fail(req.ClientAddr, now)
		return LoginResult{}, errTooManyAttempts
	}
	ok, err := h.checkPassword(ctx, req.Name, req.Password)
	now = h.clock.Now()
	if err != nil || !ok {
		h.addrLimit.Fail(req.ClientAddr, now)
		h.nameLimit.Fail(req.Name, now)
		if err != nil {
			return LoginResult{}, err
		}
		return LoginResult{}, errInvalidCredentials
	}
	h.addrLimit.Succeed(req.ClientAddr)
	h.nameLimit.Succeed(req.Name)

	id, handle, err := newDeviceSessionSecrets()
	if err != nil {
		return LoginResult{}, Wrap(Internal, err, "session could not be created")
	}
	d, _ := digestOf(id)
	s := DeviceSession{Digest: d, Handle: handle, User: req.Name, DeviceLabel: label, IssuedAt: now, ExpiresAt: now.Add(h.cfg.DeviceSessionLifetime)}
	err = h.commit(ctx, func(tx Tx) error {
		if _, err := tx.DeleteExpiredDeviceSessions(now); err != nil {
			return err
		}
		return tx.CreateDeviceSession(s)
	})
	if KindOf(err) == NotFound { // the user was removed meanwhile
		return LoginResult{}, errInvalidCredentials
	}
	if err != nil {
		return LoginResult{}, err
	}
	return LoginResult{SessionID: id, Session: s}, nil
}

// checkPassword verifies password for name under the bound on concurrent
// key-derivation work. An unknown name is verified against a dummy hash of
// the same cost.
func (h *Hub) checkPassword(ctx context.Context, name, password string) (bool, error) {
	var u User
	err := h.store.View(ctx, func(tx Tx) error {
		var err error
		u, err = tx.User(name)
		return err
	})
	known := err == nil
	if err != nil && KindOf(err) != NotFound {
		return false, err
	}
	hash := h.dummyHash
	if known {
		hash = u.PasswordHash
	}
	select {
	case h.kdf <- struct{}{}:
	case <-ctx.Done():
		return false, Wrap(Unavailable, ctx.Err(), "login was cancelled")
	}
	ok := verifyPassword(hash, password)
	h.verified.Add(1)
	<-h.kdf
	return ok && known, nil
}

// validateLogin checks the shape of a login and returns the cleaned device
// label (blank when none was given).
func validateLogin(req LoginRequest) (string, error) {
	switch {
	case req.Name == "":
		return "", Errorf(Invalid, "name is required")
	case len(req.Name) > MaxUserNameLen:
		return "", Errorf(Invalid, "name is longer than %d bytes", MaxUserNameLen)
	case !utf8.ValidString(req.Name):
		return "", Errorf(Invalid, "name is not valid UTF-8")
	case req.Password == "":
		return "", Errorf(Invalid, "password is required")
	case len(req.Password) > MaxPasswordLen:
		return "", Errorf(Invalid, "password is longer than %d bytes", MaxPasswordLen)
	case !utf8.ValidString(req.Password):
		return "", Errorf(Invalid, "password is not valid UTF-8")
	}
	label := strings.TrimSpace(req.DeviceLabel)
	if !utf8.ValidString(label) {
		return "", Errorf(Invalid, "deviceLabel is not valid UTF-8")
	}
	if strings.IndexFunc(label, func(r rune) bool { return unicode.In(r, unicode.Cc, unicode.Cf) }) >= 0 {
		return "", Errorf(Invalid, "deviceLabel must not contain control or format characters")
	}
	if utf8.RuneCountInString(label) > maxDeviceLabelLen {
		return "", Errorf(Invalid, "deviceLabel is longer than %d characters", maxDeviceLabelLen)
	}
	return label, nil
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
	if product == "" || product == "Mozilla" || len(product) > maxDeviceLabelLen ||
		strings.IndexFunc(product, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return "unknown device"
	}
	return product
}
