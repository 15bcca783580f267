package keyvault_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/keyvault"
	"github.com/wharfhub/wharf/hub"
)

func vaultAt(t *testing.T, keyFile string) *keyvault.Vault {
	t.Helper()
	v, err := keyvault.New(keyvault.Options{KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTheHubKeyFileIsMadeAtFirstUseOwnerOnlyAndKept(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "hub.key")
	v := vaultAt(t, file)
	_, err := os.Lstat(file)
	is.True(os.IsNotExist(err)) // New touches nothing
	sealed, err := v.SealToken([]byte("token-value"))
	is.NoErr(err) // the first seal makes the key
	fi, err := os.Lstat(file)
	is.NoErr(err)
	is.Equal(fi.Mode(), os.FileMode(0o600)) // a regular file for its owner only
	is.Equal(fi.Size(), int64(32))          // of 32 bytes
	entries, err := os.ReadDir(dir)
	is.NoErr(err)
	is.Equal(len(entries), 1) // and nothing else left behind
	got, err := vaultAt(t, file).OpenToken(sealed)
	is.NoErr(err)                        // a vault started later reads the same key
	is.Equal(string(got), "token-value") // and opens what the first sealed
}

func TestVaultsRacingToMakeTheKeyAgreeOnOne(t *testing.T) {
	is := is.New(t)
	file := filepath.Join(t.TempDir(), "hub.key")
	const n = 4
	vaults, sealed := make([]*keyvault.Vault, n), make([][]byte, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		vaults[i] = vaultAt(t, file)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := vaults[i].SealToken([]byte("t"))
			sealed[i] = s
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		is.NoErr(err) // every vault sealed
	}
	for i := range n {
		_, err := vaults[(i+1)%n].OpenToken(sealed[i])
		is.NoErr(err) // and each opens what another sealed: one key
	}
}

func TestAHubKeyFileThatIsNotExactlyRightIsRefusedAndKept(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	for _, c := range []struct {
		name  string
		write func(file string) error
	}{
		{"TooShort", func(f string) error { return os.WriteFile(f, key[:31], 0o600) }},
		{"TooLong", func(f string) error { return os.WriteFile(f, append(key, 0), 0o600) }},
		{"Empty", func(f string) error { return os.WriteFile(f, nil, 0o600) }},
		{"ReadableByGroup", func(f string) error {
			if err := os.WriteFile(f, key, 0o600); err != nil {
				return err
			}
			return os.Chmod(f, 0o640)
		}},
		{"ReadableByAll", func(f string) error {
			if err := os.WriteFile(f, key, 0o600); err != nil {
				return err
			}
			return os.Chmod(f, 0o644)
		}},
		{"ASymbolicLink", func(f string) error {
			if err := os.WriteFile(f+".real", key, 0o600); err != nil {
				return err
			}
			return os.Symlink(f+".real", f)
		}},
		{"ADirectory", func(f string) error { return os.Mkdir(f, 0o700) }},
		// Opening a FIFO for reading waits for a writer: the vault must
		// not hang on one put at the key's path.
		{"AFIFO", func(f string) error { return syscall.Mkfifo(f, 0o600) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			file := filepath.Join(t.TempDir(), "hub.key")
			is.NoErr(c.write(file))
			before, _ := os.Lstat(file)
			_, err := vaultAt(t, file).SealToken([]byte("token-value"))
			is.Equal(hub.KindOf(err), hub.Internal)                        // refused
			is.Equal(hub.MessageOf(err), "the Hub's key file is unusable") // saying which file, not where
			is.True(!strings.Contains(hub.MessageOf(err), file))           // the path stays in the log
			after, _ := os.Lstat(file)
			is.True(before.Mode() == after.Mode() && before.Size() == after.Size()) // the file is left as it was
		})
	}
}

func TestASecretSealedByAnotherHubDoesNotOpen(t *testing.T) {
	is := is.New(t)
	sealed, err := newVault(t).SealToken([]byte("token-value"))
	is.NoErr(err)
	_, err = newVault(t).OpenToken(sealed)
	is.Equal(hub.KindOf(err), hub.Internal) // another Hub's key opens nothing
	k, err := newVault(t).ImportSSH(seedOpenSSH(t, 9), nil)
	is.NoErr(err)
	is.True(newVault(t).Unlock("k", hub.CredentialSSH, k.Sealed, nil) != nil) // nor an unprotected key
}
