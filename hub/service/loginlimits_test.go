package service_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

const annPassword = "correct horse"

// try is one login of name from addr, presenting token.
func (th testHub) try(name, password, addr, token string) (hub.LoginResult, error) {
	return th.Login(context.Background(), hub.LoginRequest{Name: name, Password: password, ClientAddr: addr, DeviceToken: token})
}

// attack makes n failed logins for name from unknown devices, five per
// address, moving the clock on by the wait whenever it is told to wait,
// and returns the waits it was told.
func (th testHub) attack(t *testing.T, name string, n int) []time.Duration {
	t.Helper()
	var waits []time.Duration
	for i := 0; i < n; {
		_, err := th.try(name, "wrong password", fmt.Sprintf("203.0.113.%d", i/5), "")
		switch hub.KindOf(err) {
		case hub.Unauthenticated:
			i++
		case hub.RateLimited:
			w := hub.RetryAfter(err)
			if w <= 0 {
				t.Fatalf("attempt %d refused without a wait", i)
			}
			waits = append(waits, w)
			th.clock.Advance(w)
		default:
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	return waits
}

// Finding 3: twenty wrong passwords for a name must not keep its owner
// out. A device that logged in before gets in at once; an unknown one
// waits for a delay that grows, and then gets in.
func TestLoginOwnerIsNotLockedOut(t *testing.T) {
	is := is.New(t)
	th := newTestHub(t, service.Config{})
	th.mustAddUser(t, "ann", annPassword)
	phone, err := th.try("ann", annPassword, "198.51.100.7", "")
	is.NoErr(err)                    // ann logs in on her phone
	is.True(phone.DeviceToken != "") // which is known from now on

	waits := th.attack(t, "ann", 26)
	is.Equal(waits, []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 32 * time.Second}) // past 20 failures each attempt waits, the delay doubling
	is.Equal(th.PasswordVerifications(), uint64(1+26)) // no refused attempt was hashed
	_, err = th.try("ann", "wrong password", "203.0.113.99", "")
	is.Equal(hub.KindOf(err), hub.RateLimited) // the attacker is slowed
	is.Equal(hub.RetryAfter(err), time.Minute) // to one attempt a minute at most

	r, err := th.try("ann", annPassword, "192.0.2.50", phone.DeviceToken)
	is.NoErr(err)                                                      // the phone gets in at once, from any address
	is.True(r.DeviceToken != "" && r.DeviceToken != phone.DeviceToken) // with a fresh token

	_, err = th.try("ann", annPassword, "192.0.2.51", "")
	is.Equal(hub.KindOf(err), hub.RateLimited)                                      // a new laptop is slowed like the attacker
	is.Equal(hub.MessageOf(err), "too many attempts — wait a minute and try again") // with the usual message
	is.Equal(hub.RetryAfter(err), time.Minute)                                      // and the wait
	th.clock.Advance(hub.RetryAfter(err))
	laptop, err := th.try("ann", annPassword, "192.0.2.51", "")
	is.NoErr(err)                     // it gets in once the delay has passed
	is.True(laptop.DeviceToken != "") // and is known from now on

	_, err = th.try("ann", "wrong password", "203.0.113.99", "")
	is.Equal(hub.KindOf(err), hub.RateLimited) // ann's logins did not reset the attacker's slow-down
	_, err = th.try("ann", annPassword, "192.0.2.52", laptop.DeviceToken)
	is.NoErr(err) // while her known devices still get in
}

// An attempt past the threshold holds the name's slot while it runs, so
// concurrent unknown devices get one password check between them.
func TestLoginSlowDownUnderConcurrency(t *testing.T) {
	is := is.New(t)
	th := newTestHub(t, service.Config{})
	th.mustAddUser(t, "ann", annPassword)
	th.attack(t, "ann", 20)
	th.clock.Advance(time.Second)
	n := th.PasswordVerifications()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { th.try("ann", "wrong password", fmt.Sprintf("192.0.2.%d", i), "") })
	}
	wg.Wait()
	is.Equal(th.PasswordVerifications(), n+1) // one attempt per delay, however many arrive at once
}

func TestLoginAddressKeys(t *testing.T) {
	for _, tc := range []struct{ addr, key string }{
		{"192.0.2.1", "192.0.2.1"},
		{"192.0.2.1:4321", "192.0.2.1"},
		{"::ffff:192.0.2.1", "192.0.2.1"},
		{"2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2::1]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2::1]", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"unknown", "unknown"},
		{strings.Repeat("x", 100), strings.Repeat("x", 64)},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			is := is.New(t)
			is.Equal(service.AddressKey(tc.addr), tc.key) // key
		})
	}
}

// Finding 4: rotating addresses inside one IPv6 /64 (or the spellings of
// one IPv4 address) buys no new budget.
func TestLoginAddressBudgetPerPrefix(t *testing.T) {
	for _, tc := range []struct {
		name  string
		addrs []string
		other string // a client with its own budget
	}{
		{"eight addresses in one /64", []string{"2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2::3", "2001:db8:1:2:ffff::4",
			"2001:db8:1:2:1:2:3:5", "[2001:db8:1:2::6]:443", "2001:db8:1:2:abcd::7", "2001:db8:1:2::8"}, "2001:db8:1:3::1"},
		{"spellings of one IPv4 address", []string{"192.0.2.1", "::ffff:192.0.2.1", "192.0.2.1:1000", "192.0.2.1:1001",
			"192.0.2.1:1002", "192.0.2.1:1003", "192.0.2.1:1004", "192.0.2.1:1005"}, "192.0.2.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			th := newTestHub(t, service.Config{})
			th.mustAddUser(t, "ann", annPassword)
			for _, addr := range tc.addrs {
				for i := range 5 {
					th.try(fmt.Sprint("name", i), "wrong password", addr, "")
				}
			}
			is.Equal(th.PasswordVerifications(), uint64(5))                       // one address's budget: 5 checks, not 40
			is.Equal(hub.KindOf(th.CheckLoginRate(tc.addrs[0])), hub.RateLimited) // refused before the body is read
			is.NoErr(th.CheckLoginRate(tc.other))                                 // another client is not
		})
	}
}

// Finding 4: junk filling the limiters' tables must not reset a real
// name's or address's budget: a full table refuses new keys instead.
func TestLoginJunkDoesNotResetBudgets(t *testing.T) {
	is := is.New(t)
	th := newTestHub(t, service.Config{})
	th.mustAddUser(t, "ann", annPassword)
	const real = "192.0.2.1"
	for range 4 {
		th.try("ann", "wrong password", real, "")
	}
	for i := range 16 {
		th.try("ann", "wrong password", fmt.Sprintf("198.51.100.%d", i/4), "")
	}
	_, err := th.try("ann", "wrong password", "198.51.100.99", "")
	is.Equal(hub.KindOf(err), hub.RateLimited) // twenty failures slow ann down
	is.Equal(hub.RetryAfter(err), time.Second) // for a second

	n := th.PasswordVerifications()
	refused := 0
	for i := range 10_000 {
		addr := fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255)
		if _, err := th.try(fmt.Sprint("junk", i), "wrong password", addr, ""); hub.KindOf(err) == hub.RateLimited {
			refused++
		}
	}
	is.Equal(refused, 5)                                                    // once the tables are full (five real keys in each), junk is refused
	is.Equal(th.PasswordVerifications(), n+10_000-5)                        // and costs no hash
	is.Equal(hub.KindOf(th.CheckLoginRate("192.0.2.200")), hub.RateLimited) // so is a new address while the table is full

	_, err = th.try("ann", "wrong password", real, "")
	is.Equal(hub.KindOf(err), hub.RateLimited) // ann is still slowed down
	is.Equal(hub.RetryAfter(err), time.Second) // as before the junk
	th.clock.Advance(time.Second)
	_, err = th.try("ann", "wrong password", real, "")
	is.Equal(hub.KindOf(err), hub.Unauthenticated) // the real address's fifth failure
	_, err = th.try("bob", "wrong password", real, "")
	is.Equal(hub.KindOf(err), hub.RateLimited) // its budget was not reset either

	th.clock.Advance(time.Minute)
	is.NoErr(th.CheckLoginRate("192.0.2.200")) // junk addresses leave the table with their window
}

// A device token makes its device known only to the user it was issued
// to, within its lifetime and its own failure budget.
func TestLoginDeviceTokens(t *testing.T) {
	forged := base64.RawURLEncoding.EncodeToString(append([]byte{1}, bytes.Repeat([]byte{7}, 56)...))
	for _, tc := range []struct {
		name  string
		token func(ann, bob string) string
		age   time.Duration                // the clock moves on after the tokens are issued
		prep  func(th testHub, ann string) // before the attack on ann
		known bool
	}{
		{name: "issued to ann", token: func(ann, _ string) string { return ann }, known: true},
		{name: "none", token: func(string, string) string { return "" }},
		{name: "not a token", token: func(string, string) string { return "not-a-token" }},
		{name: "forged", token: func(string, string) string { return forged }},
		{name: "tampered", token: func(ann, _ string) string {
			c := byte('A')
			if ann[60] == c {
				c = 'B'
			}
			return ann[:60] + string(c) + ann[61:]
		}},
		{name: "issued to bob", token: func(_, bob string) string { return bob }},
		{name: "within its lifetime", token: func(ann, _ string) string { return ann }, age: 364 * 24 * time.Hour, known: true},
		{name: "past its lifetime", token: func(ann, _ string) string { return ann }, age: 365 * 24 * time.Hour},
		{name: "spent its budget", token: func(ann, _ string) string { return ann }, prep: func(th testHub, ann string) {
			for i := range 5 {
				_, err := th.try("ann", "wrong password", fmt.Sprint("192.0.2.", 100+i), ann)
				if hub.KindOf(err) != hub.Unauthenticated {
					panic(err)
				}
			}
		}},
		{name: "four failures of its own", token: func(ann, _ string) string { return ann }, known: true, prep: func(th testHub, ann string) {
			for i := range 4 {
				th.try("ann", "wrong password", fmt.Sprint("192.0.2.", 100+i), ann)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			th := newTestHub(t, service.Config{})
			th.mustAddUser(t, "ann", annPassword)
			th.mustAddUser(t, "bob", "battery staple")
			ann, err := th.try("ann", annPassword, "198.51.100.7", "")
			is.NoErr(err) // ann's device
			bob, err := th.try("bob", "battery staple", "198.51.100.8", "")
			is.NoErr(err) // bob's device
			th.clock.Advance(tc.age)
			if tc.prep != nil {
				tc.prep(th, ann.DeviceToken)
			}
			th.attack(t, "ann", 20)
			_, err = th.try("ann", annPassword, "192.0.2.77", tc.token(ann.DeviceToken, bob.DeviceToken))
			if tc.known {
				is.NoErr(err) // a known device is not slowed down
			} else {
				is.Equal(hub.KindOf(err), hub.RateLimited) // an unknown device is
			}
		})
	}
}

// A known device is spared the (name, address) budget too, but not the
// address's.
func TestLoginKnownDeviceLimits(t *testing.T) {
	is := is.New(t)
	th := newTestHub(t, service.Config{})
	th.mustAddUser(t, "ann", annPassword)
	phone, err := th.try("ann", annPassword, "198.51.100.7", "")
	is.NoErr(err) // ann's phone
	for range 2 {
		for range 5 {
			th.try("ann", "wrong password", "192.0.2.1", "")
		}
		th.clock.Advance(time.Minute)
	}
	_, err = th.try("ann", annPassword, "192.0.2.1", "")
	is.Equal(hub.KindOf(err), hub.RateLimited) // ten failures for ann from one address stop unknown devices there
	_, err = th.try("ann", annPassword, "192.0.2.1", phone.DeviceToken)
	is.NoErr(err) // but not her phone
	for range 5 {
		th.try("ann", "wrong password", "192.0.2.1", phone.DeviceToken)
	}
	_, err = th.try("ann", annPassword, "192.0.2.1", phone.DeviceToken)
	is.Equal(hub.KindOf(err), hub.RateLimited) // while the address's own budget holds for every device
}

// The device token key is made once, kept in the store's settings across
// restarts, and never leaves the core.
func TestDeviceTokenKey(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	var logs bytes.Buffer
	cfg := service.Config{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	th := newTestHub(t, cfg)
	th.mustAddUser(t, "ann", annPassword)
	key := func() string {
		var v string
		is.NoErr(th.store.View(ctx, func(tx hub.Tx) error {
			var err error
			v, _, err = tx.Setting(service.SettingDeviceKey)
			return err
		}))
		return v
	}
	_, err := th.try("ann", "wrong password", "192.0.2.1", "")
	is.Equal(hub.KindOf(err), hub.Unauthenticated) // a failure
	is.Equal(key(), "")                            // makes no key
	r, err := th.try("ann", annPassword, "192.0.2.1", "")
	is.NoErr(err) // the first success
	k := key()
	is.Equal(len(k), 43) // makes a 32-byte key
	r2, err := th.try("ann", annPassword, "192.0.2.1", r.DeviceToken)
	is.NoErr(err)      // another
	is.Equal(key(), k) // keeps it

	raw, _ := base64.RawURLEncoding.DecodeString(k)
	for _, out := range []string{r.SessionID, r.DeviceToken, r2.DeviceToken, fmt.Sprintf("%+v", r.Session),
		fmt.Sprint(err), logs.String()} {
		is.True(!strings.Contains(out, k))           // the key never leaves the core
		is.True(!strings.Contains(out, string(raw))) // in any form
	}

	fsys := fakes.NewFS("/home/ann")
	again, err := service.New(service.Config{Password: cheap}, service.Ports{Store: th.store, Clock: th.clock, FS: fsys,
		Git: fakes.NewGit(fsys), Backend: fakes.NewBackend(), Vault: fakes.NewKeyVault(th.clock), Tools: fakes.NewToolProber(), AgentLogins: fakes.NewAgentLogins(), Pusher: fakes.NewPusher()})
	is.NoErr(err) // the Hub restarts over the same store
	defer again.Close()
	restarted := testHub{Hub: again, store: th.store, clock: th.clock}
	restarted.attack(t, "ann", 20)
	_, err = restarted.try("ann", annPassword, "192.0.2.2", r2.DeviceToken)
	is.NoErr(err) // its devices are still known
}
