package service_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

type testHub struct {
	*service.Hub
	store *fakes.Store
	clock *fakes.Clock
}

// cheap keeps password hashing fast in tests; the algorithm is the same.
var cheap = service.PasswordParams{Memory: 64, Time: 1, Threads: 1}

func newTestHub(t *testing.T, cfg service.Config) testHub {
	t.Helper()
	if cfg.Password == (service.PasswordParams{}) {
		cfg.Password = cheap
	}
	th := testHub{store: fakes.NewStore(), clock: fakes.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))}
	fsys := fakes.NewFS("/home/ann")
	h, err := service.New(cfg, service.Ports{Store: th.store, Clock: th.clock, FS: fsys, Git: fakes.NewGit(fsys), Backend: fakes.NewBackend(), Vault: fakes.NewKeyVault(th.clock), Tools: fakes.NewToolProber(), AgentLogins: fakes.NewAgentLogins(), Pusher: fakes.NewPusher()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	th.Hub = h
	return th
}

func (th testHub) mustAddUser(t *testing.T, name, password string) {
	t.Helper()
	if err := th.AddUser(context.Background(), name, password); err != nil {
		t.Fatal(err)
	}
}

func (th testHub) mustLogin(t *testing.T, name, password string) hub.LoginResult {
	t.Helper()
	r, err := th.Login(context.Background(), hub.LoginRequest{Name: name, Password: password, ClientAddr: "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestNewRequiresPorts(t *testing.T) {
	is := is.New(t)
	_, err := service.New(service.Config{}, service.Ports{Store: fakes.NewStore(), Clock: fakes.NewClock(time.Time{})})
	is.True(err != nil) // FS missing
}

func TestLoginAndAuthenticate(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	th := newTestHub(t, service.Config{DeviceSessionLifetime: time.Hour})
	th.mustAddUser(t, "ann", "correct horse")

	r, err := th.Login(ctx, hub.LoginRequest{Name: "ann", Password: "correct horse", UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/140.0", ClientAddr: "a"})
	is.NoErr(err)                                             // login
	is.Equal(len(r.SessionID), 43)                            // 32 bytes of base64url
	is.True(!strings.Contains(r.SessionID, r.Session.Handle)) // the handle is not part of the id
	is.Equal(r.Session.DeviceLabel, "Firefox on Linux")       // label derived from the User-Agent

	s, err := th.Authenticate(ctx, r.SessionID)
	is.NoErr(err)           // the id authenticates
	is.Equal(s.User, "ann") // as ann

	for name, id := range map[string]string{
		"empty":     "",
		"malformed": "not-a-session",
		"forged":    strings.Repeat("A", 43),
		"tampered":  r.SessionID[:42] + "x",
	} {
		_, err := th.Authenticate(ctx, id)
		is.Equal(hub.KindOf(err), hub.Unauthenticated)          // a bad id is Unauthenticated
		is.Equal(hub.MessageOf(err), "authentication required") // one message for all: name
		_ = name
	}

	th.clock.Advance(time.Hour)
	_, err = th.Authenticate(ctx, r.SessionID)
	is.Equal(hub.KindOf(err), hub.Unauthenticated) // the lifetime is absolute
}

func TestLoginRefusals(t *testing.T) {
	long := strings.Repeat("x", 10*1024)
	for _, tc := range []struct {
		name string
		req  hub.LoginRequest
		kind hub.Kind
		msg  string
	}{
		{"empty name", hub.LoginRequest{Password: "pw"}, hub.Invalid, "name is required"},
		{"long name", hub.LoginRequest{Name: long, Password: "pw"}, hub.Invalid, "name is longer than 64 bytes"},
		{"empty password", hub.LoginRequest{Name: "ann"}, hub.Invalid, "password is required"},
		{"long password", hub.LoginRequest{Name: "ann", Password: long}, hub.Invalid, "password is longer than 1024 bytes"},
		{"non-UTF-8 name", hub.LoginRequest{Name: "a\xffb", Password: "pw"}, hub.Invalid, "name is not valid UTF-8"},
		{"control in label", hub.LoginRequest{Name: "ann", Password: "pw", DeviceLabel: "my\x07phone"}, hub.Invalid, "deviceLabel must not contain control or format characters"},
		{"bidi in label", hub.LoginRequest{Name: "ann", Password: "pw", DeviceLabel: "my\u202ephone"}, hub.Invalid, "deviceLabel must not contain control or format characters"},
		{"C1 in label", hub.LoginRequest{Name: "ann", Password: "pw", DeviceLabel: "my\u0085phone"}, hub.Invalid, "deviceLabel must not contain control or format characters"},
		{"long label", hub.LoginRequest{Name: "ann", Password: "pw", DeviceLabel: strings.Repeat("é", 65)}, hub.Invalid, "deviceLabel is longer than 64 characters"},
		{"wrong password", hub.LoginRequest{Name: "ann", Password: "wrong password"}, hub.Unauthenticated, "invalid credentials"},
		{"unknown user", hub.LoginRequest{Name: "eve", Password: "correct horse"}, hub.Unauthenticated, "invalid credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			th := newTestHub(t, service.Config{})
			th.mustAddUser(t, "ann", "correct horse")
			tc.req.ClientAddr = "a"
			_, err := th.Login(context.Background(), tc.req)
			is.Equal(hub.KindOf(err), tc.kind)   // kind
			is.Equal(hub.MessageOf(err), tc.msg) // message
			list, err := th.DeviceSessions(context.Background(), hub.DeviceSession{User: "ann"})
			is.NoErr(err)
			is.Equal(len(list), 0) // no session was created
		})
	}
}

func TestUnknownUserCostsOneVerification(t *testing.T) {
	is := is.New(t)
	th := newTestHub(t, service.Config{})
	th.mustAddUser(t, "ann", "correct horse")
	ctx := context.Background()
	th.Login(ctx, hub.LoginRequest{Name: "ann", Password: "wrong password", ClientAddr: "a"})
	is.Equal(th.PasswordVerifications(), uint64(1)) // a known user costs one verification
	th.Login(ctx, hub.LoginRequest{Name: "eve", Password: "wrong password", ClientAddr: "a"})
	is.Equal(th.PasswordVerifications(), uint64(2)) // an unknown user costs the same
}

func TestLoginRateLimits(t *testing.T) {
	ctx := context.Background()
	t.Run("PerAddress", func(t *testing.T) {
		is := is.New(t)
		th := newTestHub(t, service.Config{})
		th.mustAddUser(t, "ann", "correct horse")
		for i := range 5 {
			_, err := th.Login(ctx, hub.LoginRequest{Name: "ann", Password: "wrong password", ClientAddr: "a"})
			is.Equal(hub.KindOf(err), hub.Unauthenticated) // failure i is a 401
			_ = i
		}
		is.Equal(hub.KindOf(th.CheckLoginRate("a")), hub.RateLimited) // the address is spent
		is.NoErr(th.CheckLoginRate("b"))                              // other addresses are not
		_, err := th.Login(ctx, hub.LoginRequest{Name: "ann", Password: "correct horse", ClientAddr: "a"})
		is.Equal(hub.KindOf(err), hub.RateLimited) // even the right password waits
		is.Equal(hub.MessageOf(err), "too many attempts — wait a minute and try again")
		is.Equal(th.PasswordVerifications(), uint64(5)) // no hash past the budget
		th.clock.Advance(time.Minute)
		_, err = th.Login(ctx, hub.LoginRequest{Name: "ann", Password: "correct horse", ClientAddr: "a"})
		is.NoErr(err) // the window slides
	})
	t.Run("PerNameSlowsDown", func(t *testing.T) {
		is := is.New(t)
		th := newTestHub(t, service.Config{LoginLimits: service.LoginLimits{PerName: 3}})
		th.mustAddUser(t, "ann", "correct horse")
		for i := range 3 {
			th.Login(ctx, hub.LoginRequest{Name: "ann", Password: "wrong password", ClientAddr: string(rune('a' + i))})
		}
		_, err := th.Login(ctx, hub.LoginRequest{Name: "ann", Password: "wrong password", ClientAddr: "z"})
		is.Equal(hub.KindOf(err), hub.RateLimited) // many addresses cannot spray one name
		is.Equal(hub.RetryAfter(err), time.Second) // they wait for the name's delay
		_, err = th.Login(ctx, hub.LoginRequest{Name: "bob", Password: "wrong password", ClientAddr: "z"})
		is.Equal(hub.KindOf(err), hub.Unauthenticated) // other names are unaffected
	})
	t.Run("PerNameAndAddress", func(t *testing.T) {
		is := is.New(t)
		th := newTestHub(t, service.Config{})
		th.mustAddUser(t, "ann", "correct horse")
		for range 2 {
			for range 5 {
				_, err := th.Login(ctx, hub.LoginRequest{Name: "ann", Password: "wrong password", ClientAddr: "192.0.2.1"})
				is.Equal(hub.KindOf(err), hub.Unauthenticated) // a failure within the address's budget
			}
			th.clock.Advance(time.Minute) // the address's window slides
		}
		n := th.PasswordVerifications()
		_, err := th.Login(ctx, hub.LoginRequest{Name: "ann", Password: "correct horse", ClientAddr: "192.0.2.1"})
		is.Equal(hub.KindOf(err), hub.RateLimited)    // ten failures for ann from one address spend the pair's budget
		is.Equal(hub.RetryAfter(err), 13*time.Minute) // until the first leaves its 15 minutes
		is.Equal(th.PasswordVerifications(), n)       // before any hash
		_, err = th.Login(ctx, hub.LoginRequest{Name: "bob", Password: "wrong password", ClientAddr: "192.0.2.1"})
		is.Equal(hub.KindOf(err), hub.Unauthenticated) // the address may still try other names
		_, err = th.Login(ctx, hub.LoginRequest{Name: "ann", Password: "correct horse", ClientAddr: "192.0.2.2"})
		is.NoErr(err) // and ann other addresses
	})
	t.Run("ConcurrentAttemptsStayWithinBudget", func(t *testing.T) {
		is := is.New(t)
		th := newTestHub(t, service.Config{})
		th.mustAddUser(t, "ann", "correct horse")
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				th.Login(ctx, hub.LoginRequest{Name: "ann", Password: "wrong password", ClientAddr: "a"})
			})
		}
		wg.Wait()
		is.Equal(th.PasswordVerifications(), uint64(5)) // reservations keep concurrent attempts within budget
	})
	t.Run("SuccessClearsThePairNotTheAddress", func(t *testing.T) {
		is := is.New(t)
		th := newTestHub(t, service.Config{LoginLimits: service.LoginLimits{PerAddress: 8, PerNameAddress: 3}})
		th.mustAddUser(t, "ann", "correct horse")
		th.mustAddUser(t, "bob", "battery staple")
		try := func(name, password string) error {
			_, err := th.Login(ctx, hub.LoginRequest{Name: name, Password: password, ClientAddr: "a"})
			return err
		}
		for range 2 {
			is.Equal(hub.KindOf(try("ann", "wrong password")), hub.Unauthenticated) // a failure
		}
		is.NoErr(try("ann", "correct horse")) // two failures and a success
		for range 3 {
			is.Equal(hub.KindOf(try("ann", "wrong password")), hub.Unauthenticated) // the pair's budget is whole again
		}
		is.Equal(hub.KindOf(try("ann", "correct horse")), hub.RateLimited) // and now spent
		for range 2 {
			is.Equal(hub.KindOf(try("bob", "wrong password")), hub.Unauthenticated) // guesses at bob
		}
		is.NoErr(try("bob", "battery staple"))                                  // seven failures and two successes
		is.Equal(hub.KindOf(try("bob", "wrong password")), hub.Unauthenticated) // the address's eighth failure
		is.Equal(hub.KindOf(try("eve", "wrong password")), hub.RateLimited)     // successes did not clear the address
	})
}

func TestDeviceSessions(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	th := newTestHub(t, service.Config{})
	th.mustAddUser(t, "ann", "correct horse")
	th.mustAddUser(t, "bob", "correct horse")
	first := th.mustLogin(t, "ann", "correct horse")
	th.clock.Advance(time.Second)
	second := th.mustLogin(t, "ann", "correct horse")
	bobs := th.mustLogin(t, "bob", "correct horse")

	list, err := th.DeviceSessions(ctx, second.Session)
	is.NoErr(err)
	is.Equal(len(list), 2)                          // ann's two sessions
	is.Equal(list[0].Handle, second.Session.Handle) // newest first
	is.True(list[0].Current && !list[1].Current)    // the caller's is marked

	_, err = th.RevokeDeviceSession(ctx, second.Session, bobs.Session.Handle)
	is.Equal(hub.KindOf(err), hub.NotFound) // another user's handle is unknown
	is.Equal(hub.MessageOf(err), "unknown session")
	_, err = th.Authenticate(ctx, bobs.SessionID)
	is.NoErr(err) // and bob's session lives on

	current, err := th.RevokeDeviceSession(ctx, second.Session, first.Session.Handle)
	is.NoErr(err)
	is.True(!current) // revoked another device
	_, err = th.Authenticate(ctx, first.SessionID)
	is.Equal(hub.KindOf(err), hub.Unauthenticated) // dead at once
	_, err = th.RevokeDeviceSession(ctx, second.Session, first.Session.Handle)
	is.Equal(hub.KindOf(err), hub.NotFound) // revoking twice: unknown

	current, err = th.RevokeDeviceSession(ctx, second.Session, second.Session.Handle)
	is.NoErr(err)
	is.True(current) // revoked itself
}

func TestLogout(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	th := newTestHub(t, service.Config{})
	th.mustAddUser(t, "ann", "correct horse")
	r := th.mustLogin(t, "ann", "correct horse")
	is.NoErr(th.Logout(ctx, r.SessionID)) // logout
	_, err := th.Authenticate(ctx, r.SessionID)
	is.Equal(hub.KindOf(err), hub.Unauthenticated)                   // the id is dead
	is.Equal(hub.KindOf(th.Logout(ctx, r.SessionID)), hub.Forbidden) // a dead id cannot log out
	is.Equal(hub.KindOf(th.Logout(ctx, "forged")), hub.Forbidden)    // nor a forged one
}

func TestUsers(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	th := newTestHub(t, service.Config{})
	pw, created, err := th.EnsureFirstUser(ctx, "ann")
	is.NoErr(err)
	is.True(created)       // the first user is made
	is.True(len(pw) >= 20) // with a strong random password
	r := th.mustLogin(t, "ann", pw)
	_, created, err = th.EnsureFirstUser(ctx, "ann")
	is.NoErr(err)
	is.True(!created) // only once

	is.Equal(hub.KindOf(th.AddUser(ctx, "ann", "another password")), hub.Conflict) // duplicate
	is.Equal(hub.KindOf(th.AddUser(ctx, "-x", "another password")), hub.Invalid)   // bad name
	is.Equal(hub.KindOf(th.AddUser(ctx, "a b", "another password")), hub.Invalid)  // space in name
	is.Equal(hub.KindOf(th.AddUser(ctx, "bob", "short")), hub.Invalid)             // short password
	is.NoErr(th.AddUser(ctx, "bob", "another password"))

	is.NoErr(th.SetPassword(ctx, "ann", "a new password"))
	_, err = th.Authenticate(ctx, r.SessionID)
	is.Equal(hub.KindOf(err), hub.Unauthenticated) // a password change ends the user's sessions
	th.mustLogin(t, "ann", "a new password")
	is.Equal(hub.KindOf(th.SetPassword(ctx, "eve", "a new password")), hub.NotFound) // unknown user

	users, err := th.Users(ctx)
	is.NoErr(err)
	is.Equal(len(users), 2)                              // two users
	is.Equal(users[0].Name+","+users[1].Name, "ann,bob") // sorted
	is.Equal(users[0].PasswordHash, "")                  // hashes never leave the core

	r = th.mustLogin(t, "bob", "another password")
	is.NoErr(th.RemoveUser(ctx, "bob"))
	_, err = th.Authenticate(ctx, r.SessionID)
	is.Equal(hub.KindOf(err), hub.Unauthenticated)                // a removed user's sessions die
	is.Equal(hub.KindOf(th.RemoveUser(ctx, "bob")), hub.NotFound) // removing twice
}

func TestDeviceLabelFromUserAgent(t *testing.T) {
	for ua, want := range map[string]string{
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15":  "Safari on macOS",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 Version/17.5 Mobile/15E148 Safari/604.1": "Safari on iPhone",
		"Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36":            "Chrome on Android",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36 Edg/126.0":                   "Edge on Windows",
		"curl/8.5.0":               "curl",
		"Wharf Desktop/1.2 (x)":    "Wharf",
		"":                         "unknown device",
		"Mozilla/5.0 (compatible)": "unknown device",
	} {
		t.Run(want, func(t *testing.T) {
			is := is.New(t)
			is.Equal(hub.DeviceLabelFromUserAgent(ua), want) // label
		})
	}
}
