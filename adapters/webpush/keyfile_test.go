package webpush_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/webpush"
	"github.com/wharfhub/wharf/hub"
)

func start(keyFile, contact string) (*webpush.Pusher, error) {
	return webpush.New(webpush.Options{KeyFile: keyFile, Contact: contact})
}

func TestTheKeyIsMadeOnTheFirstStartAndKeptForTheNext(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "vapid.key")
	p, err := start(path, contact)
	is.NoErr(err) // the first start
	fi, err := os.Lstat(path)
	is.NoErr(err)                           // made the key file
	is.Equal(fi.Mode(), os.FileMode(0o600)) // a regular file, mode 0600
	content, err := os.ReadFile(path)
	is.NoErr(err)
	block, rest := pem.Decode(content)
	is.Equal(block.Type, "PRIVATE KEY") // one PKCS #8 PEM block
	is.Equal(len(rest), 0)              // alone
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	is.NoErr(err) // readable by any tool
	pub, err := key.(*ecdsa.PrivateKey).PublicKey.Bytes()
	is.NoErr(err)
	is.Equal(pub, p.PublicKey()) // the pusher's key

	again, err := start(path, contact)
	is.NoErr(err)                              // the next start
	is.Equal(again.PublicKey(), p.PublicKey()) // uses the same key
	after, err := os.ReadFile(path)
	is.NoErr(err)
	is.Equal(after, content) // and leaves the file as it was
	entries, err := os.ReadDir(dir)
	is.NoErr(err)
	is.Equal(len(entries), 1) // no temporary file left beside it
}

func TestAnUnconfiguredStartLeavesTheKeyFileAlone(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "vapid.key")
	p, err := start(path, "")
	is.NoErr(err)            // started without a contact
	is.True(!p.Configured()) // unconfigured
	_, err = os.Lstat(path)
	is.True(os.IsNotExist(err)) // no key made
	is.NoErr(os.WriteFile(path, []byte("damaged"), 0o644))
	_, err = start(path, "")
	is.NoErr(err) // nor read: a damaged one does not stop it
}

func TestAKeyFileGroupOrOthersMayReadIsRefused(t *testing.T) {
	for _, mode := range []os.FileMode{0o640, 0o604, 0o660, 0o700 | 0o007} {
		t.Run(mode.String(), func(t *testing.T) {
			is := is.New(t)
			path := filepath.Join(t.TempDir(), "vapid.key")
			_, err := start(path, contact)
			is.NoErr(err) // made
			is.NoErr(os.Chmod(path, mode))
			before, _ := os.ReadFile(path)
			_, err = start(path, contact)
			is.True(err != nil)                                       // refused at start
			is.True(strings.Contains(err.Error(), "group or others")) // saying why
			is.True(strings.Contains(err.Error(), "chmod 600 "+path)) // and how to mend it
			after, _ := os.ReadFile(path)
			is.Equal(after, before) // the file kept
		})
	}
}

func TestAnUnusableKeyFileIsAnErrorAndIsKept(t *testing.T) {
	pemOf := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p384DER, _ := x509.MarshalPKCS8PrivateKey(p384)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	edDER, _ := x509.MarshalPKCS8PrivateKey(ed)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p256DER, _ := x509.MarshalPKCS8PrivateKey(p256)
	sec1DER, _ := x509.MarshalECPrivateKey(p256)
	for _, c := range []struct {
		name    string
		content []byte
	}{
		{"AnEmptyFile", []byte{}},
		{"Garbage", []byte("not a key\n")},
		{"ATruncatedBlock", pemOf("PRIVATE KEY", p256DER)[:100]},
		{"ABlockOfAnotherType", pemOf("EC PRIVATE KEY", sec1DER)},
		{"APKCS8BlockThatIsNot", pemOf("PRIVATE KEY", sec1DER)},
		{"AP384Key", pemOf("PRIVATE KEY", p384DER)},
		{"AnEd25519Key", pemOf("PRIVATE KEY", edDER)},
		{"AKeyFollowedBySomething", append(pemOf("PRIVATE KEY", p256DER), "more"...)},
		{"TwoKeys", append(pemOf("PRIVATE KEY", p256DER), pemOf("PRIVATE KEY", p256DER)...)},
		{"AHugeFile", append(pemOf("PRIVATE KEY", p256DER), make([]byte, 8192)...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			path := filepath.Join(t.TempDir(), "vapid.key")
			is.NoErr(os.WriteFile(path, c.content, 0o600))
			_, err := start(path, contact)
			is.True(err != nil)                               // refused at start
			is.True(strings.Contains(err.Error(), "damaged")) // as damaged
			is.True(strings.Contains(err.Error(), path))      // naming the file
			after, _ := os.ReadFile(path)
			is.Equal(after, c.content) // never replaced
		})
	}
}

func TestAKeyFileThatIsNoRegularFileIsRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(t *testing.T, path string)
	}{
		{"ASymbolicLink", func(t *testing.T, path string) {
			target := filepath.Join(t.TempDir(), "elsewhere.key")
			if _, err := start(target, contact); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"ADanglingSymbolicLink", func(t *testing.T, path string) {
			if err := os.Symlink(filepath.Join(t.TempDir(), "missing"), path); err != nil {
				t.Fatal(err)
			}
		}},
		{"AFolder", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			path := filepath.Join(t.TempDir(), "vapid.key")
			c.make(t, path)
			_, err := start(path, contact)
			is.True(err != nil)                                // refused at start
			is.True(strings.Contains(err.Error(), "refusing")) // plainly
		})
	}
}

func TestAContactWithoutAKeyFileIsRefused(t *testing.T) {
	is := is.New(t)
	_, err := start("", contact)
	is.True(err != nil) // a key file is needed to push
}

func TestAnUnconfiguredPusherRefusesToPushWithTheFlagToSet(t *testing.T) {
	is := is.New(t)
	p, err := start(filepath.Join(t.TempDir(), "k"), "")
	is.NoErr(err)
	_, err = p.Push(t.Context(), hub.PushSubscription{}, hub.PushMessage{})
	is.Equal(hub.KindOf(err), hub.Unavailable)             // unavailable
	is.Equal(hub.MessageOf(err), hub.MsgPushNotConfigured) // naming the flag
	is.True(strings.Contains(hub.MsgPushNotConfigured, "--push-contact (WHARF_PUSH_CONTACT)"))
}

func TestFirstStartsAtOnceAgreeOnOneKey(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "vapid.key")
	const n = 8
	keys := make(chan []byte, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			p, err := start(path, contact)
			if err != nil {
				t.Error(err)
				keys <- nil
				return
			}
			keys <- p.PublicKey()
		})
	}
	wg.Wait()
	close(keys)
	first := <-keys
	for k := range keys {
		is.Equal(k, first) // every start holds the one key
	}
	p, err := start(path, contact)
	is.NoErr(err)
	is.Equal(p.PublicKey(), first) // the one in the file
}
