package fakes_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

var vaultEpoch = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func TestKeyVault(t *testing.T) {
	porttest.KeyVault(t, func(*testing.T) hub.KeyVault { return fakes.NewKeyVault(fakes.NewClock(vaultEpoch)) })
}

func TestTwoFakeVaultsMakeTheSameKeysInTheSameOrder(t *testing.T) {
	is := is.New(t)
	var fps [2][]string
	for i := range fps {
		v := fakes.NewKeyVault(fakes.NewClock(vaultEpoch))
		for range 2 {
			k, err := v.GenerateSSH([]byte("pass"), "c")
			is.NoErr(err)
			fps[i] = append(fps[i], k.Fingerprint)
		}
		k, err := v.GenerateOpenPGP("Ann <ann@example.com>", []byte("pass"))
		is.NoErr(err)
		fps[i] = append(fps[i], k.Fingerprint)
	}
	is.Equal(fps[0], fps[1])        // the same keys
	is.True(fps[0][0] != fps[0][1]) // each new
}
