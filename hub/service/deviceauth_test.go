package service_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// countingStore counts the transactions a Hub opens.
type countingStore struct {
	*fakes.Store
	views, updates atomic.Int64
}

func (s *countingStore) View(ctx context.Context, fn func(hub.Tx) error) error {
	s.views.Add(1)
	return s.Store.View(ctx, fn)
}

func (s *countingStore) Update(ctx context.Context, fn func(hub.Tx) error) error {
	s.updates.Add(1)
	return s.Store.Update(ctx, fn)
}

// Authenticating reads memory: once the table is loaded, requests cost no
// transaction, and what the Hub itself changes reaches the table before
// the change returns.
func TestAuthenticationReadsNoStore(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	fsys := fakes.NewFS("/home/ann")
	store := &countingStore{Store: fakes.NewStore()}
	clock := fakes.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	h, err := service.New(service.Config{Password: cheap, DeviceSessionLifetime: time.Hour},
		service.Ports{Store: store, Clock: clock, FS: fsys, Git: fakes.NewGit(fsys), Backend: fakes.NewBackend(), Vault: fakes.NewKeyVault(clock), Tools: fakes.NewToolProber(), AgentLogins: fakes.NewAgentLogins(), Pusher: fakes.NewPusher()})
	is.NoErr(err)
	defer h.Close()
	is.NoErr(h.AddUser(ctx, "ann", "correct horse battery"))
	password := "correct horse battery"
	login := func() string {
		r, err := h.Login(ctx, hub.LoginRequest{Name: "ann", Password: password, ClientAddr: "10.0.0.1"})
		is.NoErr(err) // login
		return r.SessionID
	}
	a, b := login(), login()
	_, err = h.Authenticate(ctx, a)
	is.NoErr(err) // the first request loads the table

	views := store.views.Load()
	for range 100 {
		_, err := h.Authenticate(ctx, a)
		is.NoErr(err) // authenticated
	}
	c := login()
	_, err = h.Authenticate(ctx, c)
	is.NoErr(err)                                // a new login authenticates at once
	is.Equal(store.views.Load()-views, int64(1)) // and only the login read the store (its user)

	sb, _ := h.Authenticate(ctx, b)
	_, err = h.RevokeDeviceSession(ctx, sb, handleOf(t, h, a))
	is.NoErr(err) // b revokes a
	_, err = h.Authenticate(ctx, a)
	is.Equal(hub.KindOf(err), hub.Unauthenticated) // a is refused on its very next request
	is.NoErr(h.Logout(ctx, b))                     // b logs out
	_, err = h.Authenticate(ctx, b)
	is.Equal(hub.KindOf(err), hub.Unauthenticated) // and is refused
	password = "another long password"
	is.NoErr(h.SetPassword(ctx, "ann", password))
	_, err = h.Authenticate(ctx, c)
	is.Equal(hub.KindOf(err), hub.Unauthenticated) // a password change ends every session of the user

	d := login()
	clock.Advance(time.Hour)
	_, err = h.Authenticate(ctx, d)
	is.Equal(hub.KindOf(err), hub.Unauthenticated) // an expired session is refused
}

// handleOf returns the handle of the session with id.
func handleOf(t *testing.T, h *service.Hub, id string) string {
	t.Helper()
	s, err := h.Authenticate(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s.Handle
}

// Another process (wharf user) writes the store directly; the Hub sees it
// on the next request, through the store's external generation.
func TestAuthenticationSeesAnotherProcess(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	th := newTestHub(t, service.Config{})
	th.mustAddUser(t, "ann", "correct horse battery")
	th.mustAddUser(t, "bob", "staple tuna kettle")
	ann, bob := th.mustLogin(t, "ann", "correct horse battery"), th.mustLogin(t, "bob", "staple tuna kettle")
	_, err := th.Authenticate(ctx, ann.SessionID)
	is.NoErr(err) // ann authenticates

	other := th.store.Peer()
	admin, err := service.New(service.Config{Password: cheap}, service.Ports{Store: other, Clock: th.clock, FS: fakes.NewFS("/"),
		Git: fakes.NewGit(fakes.NewFS("/")), Backend: fakes.NewBackend(), Vault: fakes.NewKeyVault(th.clock), Tools: fakes.NewToolProber(), AgentLogins: fakes.NewAgentLogins(), Pusher: fakes.NewPusher()})
	is.NoErr(err) // a second Hub over the same records, as wharf user builds
	defer admin.Close()
	is.NoErr(admin.SetPassword(ctx, "ann", "a new long password")) // wharf user passwd ann

	_, err = th.Authenticate(ctx, ann.SessionID)
	is.Equal(hub.KindOf(err), hub.Unauthenticated) // ann's session is refused at its very next request
	_, err = th.Authenticate(ctx, bob.SessionID)
	is.NoErr(err)                          // bob's is untouched
	is.NoErr(admin.RemoveUser(ctx, "bob")) // wharf user remove bob
	_, err = th.Authenticate(ctx, bob.SessionID)
	is.Equal(hub.KindOf(err), hub.Unauthenticated) // and bob's ends with bob
}
