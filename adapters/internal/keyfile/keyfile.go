// Package keyfile makes the private key files of the state directory
// (the vault's Hub key, the Web Push VAPID key) once and for good.
//
// A key file is never replaced: the Hub's sealed secrets and the push
// services' subscriptions depend on the key it holds. So a new key is
// written to a fresh 0600 file beside the path (O_EXCL, never through a
// link), synced, then hard-linked to the path — a link, unlike a rename,
// fails when the path exists — and the folder is synced. A crash leaves
// no file at the path or a whole one, and of two starts making a key at
// once, the first link wins and the other reads its key.
package keyfile

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// CreateOnce makes the file at path with data, mode 0600, unless a file
// is already there: created is false then, and the caller reads the file
// that won. The temporary file is removed either way.
func CreateOnce(path string, data []byte) (created bool, err error) {
	dir := filepath.Dir(path)
	tmp, err := writeTemp(dir, data)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return false, nil
		}
		return false, err
	}
	return true, syncDir(dir)
}

// writeTemp writes data to a new 0600 file in dir and syncs it.
func writeTemp(dir string, data []byte) (string, error) {
	name := filepath.Join(dir, ".key-"+rand.Text()+".tmp")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
