package fakes_test

import (
	"testing"
	"time"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

func TestKeyVault(t *testing.T) {
	porttest.KeyVault(t, func(*testing.T) hub.KeyVault {
		return fakes.NewKeyVault(fakes.NewClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)))
	})
}
