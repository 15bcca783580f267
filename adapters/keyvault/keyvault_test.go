package keyvault_test

import (
	"path/filepath"
	"testing"

	"github.com/wharfhub/wharf/adapters/keyvault"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

// newVault returns a vault whose key file lives in a fresh private
// folder.
func newVault(t *testing.T) *keyvault.Vault {
	t.Helper()
	v, err := keyvault.New(keyvault.Options{KeyFile: filepath.Join(t.TempDir(), "hub.key")})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestKeyVault(t *testing.T) {
	porttest.KeyVault(t, func(t *testing.T) hub.KeyVault { return newVault(t) })
}
