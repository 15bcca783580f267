package webpush

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/wharfhub/wharf/adapters/internal/keyfile"
)

// maxKeyFile bounds what is read of the key file: a P-256 PKCS #8 PEM
// block is about 240 bytes.
const maxKeyFile = 4096

// pemType is the key file's one PEM block.
const pemType = "PRIVATE KEY"

// loadOrCreateKey reads the VAPID key from path, or makes it when
// nothing is there, reporting whether it did. A new key goes to a fresh
// 0600 file beside path (O_EXCL), synced, then linked to path — a rename
// that never replaces a file — and the folder is synced: a crash leaves
// no key file or a whole one, and a file another start made meanwhile
// wins, so every start uses one key. A file that is there but unusable
// is an error, never replaced.
func loadOrCreateKey(path string) (*ecdsa.PrivateKey, bool, error) {
	key, err := readKey(path)
	if !errors.Is(err, os.ErrNotExist) {
		return key, false, err
	}
	key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, false, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, false, err
	}
	data := pem.EncodeToMemory(&pem.Block{Type: pemType, Bytes: der})
	clear(der)
	defer clear(data)
	created, err := keyfile.CreateOnce(path, data)
	if err != nil {
		return nil, false, fmt.Errorf("the VAPID key file %s could not be written: %w", path, err)
	}
	if !created {
		key, err := readKey(path) // another start made it first: use its key
		return key, false, err
	}
	return key, true, nil
}

// readKey reads the key file strictly: a regular file, not reached
// through a symbolic link, owned by this user, closed to group and
// others, holding one PEM block of a PKCS #8 P-256 ECDSA key and nothing
// else. Its errors name the file and what is wrong, never its content.
func readKey(path string) (*ecdsa.PrivateKey, error) {
	// O_NONBLOCK: a FIFO at path would otherwise block the open until a
	// writer came; it is then refused as no regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("refusing the VAPID key file %s: it is a symbolic link", path)
		}
		return nil, fmt.Errorf("the VAPID key file %s could not be opened: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("the VAPID key file %s: %w", path, err)
	}
	switch {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("refusing the VAPID key file %s: not a regular file", path)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("refusing the VAPID key file %s: group or others may access it (mode %o); run: chmod 600 %s",
			path, fi.Mode().Perm(), path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("refusing the VAPID key file %s: owned by another user", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("the VAPID key file %s could not be read: %w", path, err)
	}
	defer clear(data)
	key, err := parseKey(data)
	if err != nil {
		return nil, fmt.Errorf("the VAPID key file %s is damaged (%s); restore it from a backup, "+
			"or remove it to make a new key, which ends every enrolled device's subscription", path, err)
	}
	return key, nil
}

// parseKey reads the key file's content.
func parseKey(data []byte) (*ecdsa.PrivateKey, error) {
	if len(data) > maxKeyFile {
		return nil, errors.New("it is too large")
	}
	block, rest := pem.Decode(data)
	switch {
	case block == nil || block.Type != pemType || len(block.Headers) != 0:
		return nil, errors.New("it holds no " + pemType + " PEM block")
	case len(bytes.TrimSpace(rest)) != 0:
		return nil, errors.New("something follows its key")
	}
	defer clear(block.Bytes)
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("its key is not PKCS #8")
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok || key.Curve != elliptic.P256() {
		return nil, errors.New("its key is not a P-256 ECDSA key")
	}
	return key, nil
}
