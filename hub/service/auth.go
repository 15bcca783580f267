package service

import (
	"context"
	"net/netip"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/internal/ratelimit"
)

// LoginLimits bound failed logins. A zero field takes its default.
//
// A client address is keyed by its IPv4 address or its IPv6 /64 prefix
// (one subscriber's network, inside which a client can pick any address).
// A device is known to a user when it presents a device token that a
// successful login of that user issued (see devicetoken.go).
type LoginLimits struct {
	// PerAddress bounds failures per client address per AddressWindow,
	// known device or not; past it the address is answered 429 before any
	// password is hashed. Default 5 per minute.
	PerAddress    int
	AddressWindow time.Duration
	// PerNameAddress bounds failures from unknown devices per (user name,
	// client address) per NameWindow. Default 10.
	PerNameAddress int
	// PerName is how many failures from unknown devices a user name may
	// have per NameWindow before it slows down: each further attempt from
	// an unknown device must come NameDelay after the name's previous one,
	// the delay doubling with each further failure up to MaxNameDelay.
	// Known devices are not slowed, so guessing at a name cannot lock its
	// owner out. (An address table filled to MaxKeys refuses a new
	// address before the device is looked at: that limit bounds the
	// Hub's memory under a flood from many addresses, known devices
	// included.) Default 20 per 15 minutes, 1 s doubling to 1 minute.
	PerName      int
	NameWindow   time.Duration
	NameDelay    time.Duration
	MaxNameDelay time.Duration
	// PerDevice bounds failures per device token per DeviceWindow; past
	// it the token no longer makes its device known, so a stolen token
	// buys little. Default 5 per hour.
	PerDevice    int
	DeviceWindow time.Duration
	// DeviceLifetime is how long a device token makes its device known
	// after the login that issued it. Default 365 days.
	DeviceLifetime time.Duration
	// MaxKeys bounds the keys of each limiter table; default 10,000. A
	// full table forgets only keys with nothing in their window and
	// otherwise refuses new keys (429), so junk cannot reset a real key.
	MaxKeys int
}

// withDefaults fills the zero fields of l.
func (l LoginLimits) withDefaults() LoginLimits {
	setInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	setInt(&l.PerAddress, 5)
	setDur(&l.AddressWindow, time.Minute)
	setInt(&l.PerNameAddress, 10)
	setInt(&l.PerName, 20)
	setDur(&l.NameWindow, 15*time.Minute)
	setDur(&l.NameDelay, time.Second)
	setDur(&l.MaxNameDelay, time.Minute)
	l.MaxNameDelay = max(l.MaxNameDelay, l.NameDelay)
	setInt(&l.PerDevice, 5)
	setDur(&l.DeviceWindow, time.Hour)
	setDur(&l.DeviceLifetime, 365*24*time.Hour)
	setInt(&l.MaxKeys, 10000)
	return l
}

// loginGate holds what limits logins: one table per limit, and the key
// device tokens are signed with.
type loginGate struct {
	limits LoginLimits
	addr   *ratelimit.Limiter // failures per client address
	pair   *ratelimit.Limiter // unknown-device failures per (name, address)
	name   *ratelimit.Limiter // unknown-device failures per name: slows down
	device *ratelimit.Limiter // failures per device token
	key    deviceKey
}

func newLoginGate(l LoginLimits) loginGate {
	return loginGate{
		limits: l,
		addr:   ratelimit.New(ratelimit.Config{Budget: l.PerAddress, Window: l.AddressWindow, MaxKeys: l.MaxKeys}),
		pair:   ratelimit.New(ratelimit.Config{Budget: l.PerNameAddress, Window: l.NameWindow, MaxKeys: l.MaxKeys}),
		name: ratelimit.New(ratelimit.Config{Budget: l.PerName, Window: l.NameWindow, MaxKeys: l.MaxKeys,
			Delay: l.NameDelay, MaxDelay: l.MaxNameDelay}),
		device: ratelimit.New(ratelimit.Config{Budget: l.PerDevice, Window: l.DeviceWindow, MaxKeys: l.MaxKeys}),
	}
}

var (
	errTooManyAttempts    = hub.Errorf(hub.RateLimited, "too many attempts — wait a minute and try again")
	errInvalidCredentials = hub.Errorf(hub.Unauthenticated, "invalid credentials")
)

// addressKey is the key of a client address in the login limits: an IPv4
// address as it is, an IPv6 address by its /64 prefix, anything else
// (no address the transport could tell) as given, cut to a bound.
func addressKey(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil {
			ip, err = netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"))
		} else {
			ip = ap.Addr()
		}
		if err != nil {
			if len(addr) > maxAddressKeyLen {
				addr = addr[:maxAddressKeyLen]
			}
			return addr
		}
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.Prefix(64)
	return p.String()
}

// maxAddressKeyLen bounds a client address that is not an IP address.
const maxAddressKeyLen = 64

// CheckLoginRate reports a RateLimited error when the client address has
// spent its budget of failed logins (or the address table is full).
// Transports call it before they read the request body; Login checks
// again.
func (h *Hub) CheckLoginRate(clientAddr string) error {
	if ok, wait := h.loginGate.addr.Check(addressKey(clientAddr), h.clock.Now()); !ok {
		h.counters.loginRefusals.Add(1)
		return tooManyAttempts(wait)
	}
	return nil
}

// DeviceTokenLifetime reports how long a device token issued now makes
// its device known: a transport keeps it (a cookie) that long.
func (h *Hub) DeviceTokenLifetime() time.Duration { return h.loginGate.limits.DeviceLifetime }

// Login verifies a name and password and opens a device session.
//
// Order: input validation (Invalid); the limits, answered RateLimited
// before any hash is computed: the client address's failure budget, then,
// unless DeviceToken makes the device known to the name (and its own
// budget is not spent), the (name, address) budget and the name's
// slow-down; then one password verification, also for an unknown name, so
// the answer and its cost do not reveal which names exist
// (Unauthenticated "invalid credentials"). A RateLimited answer carries
// the wait when it is known (RetryAfter).
//
// A failure counts against the address and either the device token or
// the (name, address) pair and the name. A success clears the device
// token's or the pair's failures, but not the address's (they may be
// guesses at other names) nor the name's (the owner logging in must not
// reset an attacker's slow-down), and issues a fresh device token.
func (h *Hub) Login(ctx context.Context, req hub.LoginRequest) (hub.LoginResult, error) {
	label, err := validateLogin(req)
	if err != nil {
		return hub.LoginResult{}, err
	}
	if label == "" {
		label = hub.DeviceLabelFromUserAgent(req.UserAgent)
	}
	g := &h.loginGate
	addr := addressKey(req.ClientAddr)
	pair := req.Name + "\x00" + addr
	now := h.clock.Now()
	if ok, wait := g.addr.Reserve(addr, now); !ok {
		return hub.LoginResult{}, h.refuseLogin(wait)
	}
	device, known := h.knownDevice(ctx, req.DeviceToken, req.Name, now)
	if known {
		known, _ = g.device.Reserve(device, now) // a spent token is an unknown device
	}
	if !known {
		if ok, wait := g.pair.Reserve(pair, now); !ok {
			g.addr.Release(addr)
			return hub.LoginResult{}, h.refuseLogin(wait)
		}
		if ok, wait := g.name.Reserve(req.Name, now); !ok {
			g.addr.Release(addr)
			g.pair.Release(pair)
			return hub.LoginResult{}, h.refuseLogin(wait)
		}
	}
	ok, err := h.checkPassword(ctx, req.Name, req.Password)
	now = h.clock.Now()
	if err != nil {
		// No password was judged (the store failed, or the caller gave up
		// waiting for the key derivation): nothing to count against anyone.
		g.addr.Release(addr)
		if known {
			g.device.Release(device)
		} else {
			g.pair.Release(pair)
			g.name.Release(req.Name)
		}
		return hub.LoginResult{}, err
	}
	if !ok {
		g.addr.Fail(addr, now)
		if known {
			g.device.Fail(device, now)
		} else {
			g.pair.Fail(pair, now)
			g.name.Fail(req.Name, now)
		}
		return hub.LoginResult{}, h.failLogin()
	}
	g.addr.Release(addr)
	if known {
		g.device.Succeed(device)
	} else {
		g.pair.Succeed(pair)
		g.name.Release(req.Name)
	}

	id, handle, err := newDeviceSessionSecrets()
	if err != nil {
		return hub.LoginResult{}, hub.Wrap(hub.Internal, err, "session could not be created")
	}
	d, _ := digestOf(id)
	s := hub.DeviceSession{Digest: d, Handle: handle, User: req.Name, DeviceLabel: label, IssuedAt: now, ExpiresAt: now.Add(h.cfg.DeviceSessionLifetime)}
	err = h.commit(ctx, func(tx *writes) error {
		if _, err := tx.DeleteExpiredDeviceSessions(now); err != nil {
			return err
		}
		return tx.CreateDeviceSession(s)
	})
	if hub.KindOf(err) == hub.NotFound { // the user was removed meanwhile
		return hub.LoginResult{}, h.failLogin()
	}
	if err != nil {
		return hub.LoginResult{}, err
	}
	h.counters.logins.Add(1)
	return hub.LoginResult{SessionID: id, Session: s, DeviceToken: h.issueDeviceToken(ctx, req.Name, now)}, nil
}

// refuseLogin counts a login the limits refused and returns its refusal.
func (h *Hub) refuseLogin(wait time.Duration) error {
	h.counters.loginRefusals.Add(1)
	return tooManyAttempts(wait)
}

// failLogin counts a login refused for its name or password and returns
// its refusal.
func (h *Hub) failLogin() error {
	h.counters.loginFailures.Add(1)
	return errInvalidCredentials
}

// checkPassword verifies password for name under the bound on concurrent
// key-derivation work. An unknown name is verified against a dummy hash of
// the same cost.
func (h *Hub) checkPassword(ctx context.Context, name, password string) (bool, error) {
	var u hub.User
	err := h.store.View(ctx, func(tx hub.Tx) error {
		var err error
		u, err = tx.User(name)
		return err
	})
	known := err == nil
	if err != nil && hub.KindOf(err) != hub.NotFound {
		return false, err
	}
	hash := h.dummyHash
	if known {
		hash = u.PasswordHash
	}
	select {
	case h.kdf <- struct{}{}:
	case <-ctx.Done():
		return false, hub.Wrap(hub.Unavailable, ctx.Err(), "login was cancelled")
	}
	ok := verifyPassword(hash, password)
	h.verified.Add(1)
	<-h.kdf
	return ok && known, nil
}

// validateLogin checks the shape of a login and returns the cleaned device
// label (blank when none was given).
func validateLogin(req hub.LoginRequest) (string, error) {
	switch {
	case req.Name == "":
		return "", hub.Errorf(hub.Invalid, "name is required")
	case len(req.Name) > hub.MaxUserNameLen:
		return "", hub.Errorf(hub.Invalid, "name is longer than %d bytes", hub.MaxUserNameLen)
	case !utf8.ValidString(req.Name):
		return "", hub.Errorf(hub.Invalid, "name is not valid UTF-8")
	case req.Password == "":
		return "", hub.Errorf(hub.Invalid, "password is required")
	case len(req.Password) > hub.MaxPasswordLen:
		return "", hub.Errorf(hub.Invalid, "password is longer than %d bytes", hub.MaxPasswordLen)
	case !utf8.ValidString(req.Password):
		return "", hub.Errorf(hub.Invalid, "password is not valid UTF-8")
	}
	label := strings.TrimSpace(req.DeviceLabel)
	if !utf8.ValidString(label) {
		return "", hub.Errorf(hub.Invalid, "deviceLabel is not valid UTF-8")
	}
	if strings.IndexFunc(label, func(r rune) bool { return unicode.In(r, unicode.Cc, unicode.Cf) }) >= 0 {
		return "", hub.Errorf(hub.Invalid, "deviceLabel must not contain control or format characters")
	}
	if utf8.RuneCountInString(label) > hub.MaxDeviceLabelLen {
		return "", hub.Errorf(hub.Invalid, "deviceLabel is longer than %d characters", hub.MaxDeviceLabelLen)
	}
	return label, nil
}

// tooManyAttempts is the refusal of a login that may try again after
// wait (zero: not known).
func tooManyAttempts(wait time.Duration) error {
	if wait <= 0 {
		return errTooManyAttempts
	}
	return &hub.Error{Kind: hub.RateLimited, Message: errTooManyAttempts.Message, Details: &hub.Details{RetryAfter: wait}}
}
