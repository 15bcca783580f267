package fakes_test

import (
	"testing"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

func TestStore(t *testing.T) {
	porttest.Store(t, func(*testing.T) hub.Store { return fakes.NewStore() })
}

func TestStorePeers(t *testing.T) {
	porttest.StorePeers(t, func(*testing.T) (hub.Store, hub.Store) {
		s := fakes.NewStore()
		return s, s.Peer()
	})
}
