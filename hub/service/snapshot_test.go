package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// midRead is a Store whose next View runs during after its transaction has
// read, as a write racing a reader would.
type midRead struct {
	*fakes.Store
	during func()
}

func (s *midRead) View(ctx context.Context, fn func(hub.Tx) error) error {
	err := s.Store.View(ctx, fn)
	if d := s.during; d != nil {
		s.during = nil
		d()
	}
	return err
}

// The state answers from a snapshot of the registry; a snapshot read while
// a write committed must not outlive that write.
func TestStateNeverKeepsARegistryReadThatRacedAWrite(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	fsys := fakes.NewFS(home)
	store := &midRead{Store: fakes.NewStore()}
	h, err := service.New(service.Config{Password: cheap}, service.Ports{Store: store, Clock: fakes.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)),
		FS: fsys, Git: fakes.NewGit(fsys), Backend: fakes.NewBackend(), Vault: fakes.NewKeyVault(hub.SystemClock{}), Tools: fakes.NewToolProber(), AgentLogins: fakes.NewAgentLogins(), Pusher: fakes.NewPusher()})
	is.NoErr(err) // new hub
	defer h.Close()
	fsys.MkdirAll("/home/ann/src/app")
	a, err := h.Register(ctx, hub.RegisterRequest{Path: "/home/ann/src/app", Init: true})
	is.NoErr(err) // register

	// The first state read loads the snapshot; the rename commits after
	// that read's transaction and before the snapshot is kept.
	store.during = func() {
		_, err := h.SetDisplayName(ctx, a.ID, "Renamed")
		is.NoErr(err) // rename during the read
	}
	st, err := h.State(ctx, hub.DeviceSession{User: "ann"})
	is.NoErr(err)                                 // racing state
	is.Equal(st.Workspaces[0].DisplayName, "app") // the racing read saw the old name

	st, err = h.State(ctx, hub.DeviceSession{User: "ann"})
	is.NoErr(err)                                     // next state
	is.Equal(st.Workspaces[0].DisplayName, "Renamed") // the stale read was not kept
}
