package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/adapters/sqlite"
	"github.com/wharfhub/wharf/adapters/sqlite/sqlitetest"
	"github.com/wharfhub/wharf/hub"
)

// privateTempDir is a new directory of mode 0700, as a state directory
// must be, with a short path: the sessions' sockets live below it.
func privateTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "wbackup") // made 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// acks records the writes a Hub acknowledged, in order, per writer.
type acks struct {
	mu     sync.Mutex
	tokens map[int][]string // writer -> token names, in creation order
	name   int              // the last display name number acknowledged
}

func (a *acks) copyTokens() map[int][]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[int][]string{}
	for w, names := range a.tokens {
		out[w] = append([]string(nil), names...)
	}
	return out
}

// TestABackupUnderWritesRestoresEveryAcknowledgedWrite backs up the state
// of a running daemon while writers create tokens and rename a workspace,
// then restores it into a new directory and starts a Hub there: every
// write acknowledged before the backup began is there, each writer's
// tokens are a gapless prefix of what it wrote (one moment of the
// database), and the key imported without a passphrase unlocks at start,
// which only the backed-up hub.key can do.
func TestABackupUnderWritesRestoresEveryAcknowledgedWrite(t *testing.T) {
	is := is.New(t)
	ctx := testContext(t)
	dir := privateTempDir(t)
	d, err := daemon.Open(ctx, daemon.Config{StateDir: dir})
	is.NoErr(err) // the running daemon, holding its lock
	defer d.Close()
	h := d.Hub()

	_, priv, err := ed25519.GenerateKey(rand.Reader)
	is.NoErr(err) // an SSH key
	block, err := ssh.MarshalPrivateKey(priv, "laptop")
	is.NoErr(err) // in OpenSSH's format, without a passphrase
	key, err := h.ImportSSHKey(ctx, hub.Requester{User: "ann", Client: "test"}, hub.NewSSHKey{Name: "laptop",
		Capabilities: []hub.Capability{hub.CapSSHSigning}, PrivateKey: string(pem.EncodeToMemory(block))})
	is.NoErr(err) // imported: sealed with the Hub's key
	folder := filepath.Join(t.TempDir(), "project")
	is.NoErr(os.Mkdir(folder, 0o755))
	ws, err := h.Register(ctx, hub.RegisterRequest{Path: folder, Init: true})
	is.NoErr(err) // a workspace to rename

	const writers = 2
	a := &acks{tokens: map[int][]string{}}
	stop := make(chan struct{})
	errs := make(chan error, writers+1)
	progress := make(chan struct{}, 64)
	for w := range writers {
		go func() {
			for n := 0; n < 10_000; n++ { // bounded; stopped long before
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				name := fmt.Sprintf("t%d-%04d", w, n)
				_, err := h.CreateToken(context.Background(), hub.NewToken{Name: name, Host: "git.example.com",
					Token: "secret-" + name, Capabilities: []hub.Capability{hub.CapHTTPSGit}})
				if err != nil {
					errs <- err
					return
				}
				a.mu.Lock()
				a.tokens[w] = append(a.tokens[w], name)
				a.mu.Unlock()
				select {
				case progress <- struct{}{}:
				default:
				}
			}
			errs <- fmt.Errorf("writer %d ran out of tokens", w)
		}()
	}
	go func() {
		for n := 1; n < 10_000; n++ {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			if _, err := h.SetDisplayName(context.Background(), ws.ID, fmt.Sprintf("name-%04d", n)); err != nil {
				errs <- err
				return
			}
			a.mu.Lock()
			a.name = n
			a.mu.Unlock()
		}
		errs <- fmt.Errorf("the renamer ran out of names")
	}()
	for range 20 { // let the writers get going
		select {
		case <-progress:
		case <-ctx.Done():
			t.Fatal("the writers did not get going")
		}
	}

	file := filepath.Join(t.TempDir(), "wharf-backup.tar")
	before := a.copyTokens()
	a.mu.Lock()
	nameBefore := a.name
	a.mu.Unlock()
	stderr := newOutput()
	err = run(ctx, []string{"backup", file, "--state-dir", dir}, envOf(nil), strings.NewReader(""), io.Discard, stderr)
	close(stop)
	for range writers + 1 {
		is.NoErr(<-errs) // every writer wrote throughout the backup
	}
	is.NoErr(err)                                                                           // the backup is written beside the running daemon
	is.True(strings.Contains(stderr.String(), "keep it as private as the state directory")) // it says how to keep it
	fi, err := os.Stat(file)
	is.NoErr(err)                                  // the archive is there
	is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // private
	left, err := filepath.Glob(filepath.Join(dir, ".backup-*"))
	is.NoErr(err)          // look for the snapshot
	is.Equal(len(left), 0) // it was removed
	after := a.copyTokens()

	restored := filepath.Join(privateTempDir(t), "state")
	err = run(ctx, []string{"restore", file, "--state-dir", restored}, envOf(nil), strings.NewReader(""), io.Discard, stderr)
	is.NoErr(err)                                                                   // restored into a new directory
	is.True(strings.Contains(stderr.String(), "wharf serve --state-dir "+restored)) // it says how to start
	rd, err := daemon.Open(ctx, daemon.Config{StateDir: restored})
	is.NoErr(err) // a Hub starts from it, as wharf serve would
	defer rd.Close()
	rh := rd.Hub()

	list, err := rh.Credentials(ctx)
	is.NoErr(err) // the restored credentials
	have := map[int][]string{}
	var laptop *hub.CredentialView
	for i, c := range list.Credentials {
		var w, n int
		if _, err := fmt.Sscanf(c.Name, "t%d-%d", &w, &n); err == nil {
			have[w] = append(have[w], c.Name)
		}
		if c.ID == key.ID {
			laptop = &list.Credentials[i]
		}
	}
	total := 0
	for w := range writers {
		is.True(len(have[w]) >= len(before[w]))    // every token acknowledged before the backup is there
		is.True(len(have[w]) <= len(after[w])+1)   // and nothing no writer sent
		is.Equal(have[w], after[w][:len(have[w])]) // a gapless prefix of the writer's tokens
		total += len(have[w])
	}
	t.Logf("tokens acknowledged before the backup: %d and %d; restored: %d", len(before[0]), len(before[1]), total)
	views, err := rh.Workspaces(ctx)
	is.NoErr(err)                                    // the restored workspaces
	is.True(len(views) == 1 && views[0].ID == ws.ID) // the workspace is there
	var n int
	_, err = fmt.Sscanf(views[0].DisplayName, "name-%d", &n)
	is.NoErr(err)            // renamed by the writer
	is.True(n >= nameBefore) // at least as late as the last rename acknowledged before the backup

	is.True(laptop != nil)                                // the imported key is there
	is.Equal(laptop.Readiness[0].Status, hub.StatusReady) // unlocked at start with the restored hub.key
	is.Equal(laptop.PublicKey, key.PublicKey)             // the same key
}

// stateWithTokens makes a state directory whose database holds three
// tokens, with no daemon serving it, and returns it with their ids.
func stateWithTokens(t *testing.T) (string, []string) {
	is := is.New(t)
	ctx := testContext(t)
	dir := privateTempDir(t)
	d, err := daemon.Open(ctx, daemon.Config{StateDir: dir, Admin: true})
	is.NoErr(err) // the state
	defer d.Close()
	var ids []string
	for i := range 3 {
		c, err := d.Hub().CreateToken(ctx, hub.NewToken{Name: fmt.Sprintf("t%d", i), Host: "git.example.com", Token: "secret",
			Capabilities: []hub.Capability{hub.CapHTTPSGit}})
		is.NoErr(err) // a token
		ids = append(ids, c.ID)
	}
	return dir, ids
}

// tarOf writes an archive of the named files, in order, and returns its
// path.
func tarOf(t *testing.T, files ...[2]string) string {
	is := is.New(t)
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, f := range files {
		is.NoErr(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f[0], Size: int64(len(f[1])), Mode: 0o600})) // the header
		_, err := tw.Write([]byte(f[1]))
		is.NoErr(err) // the body
	}
	is.NoErr(tw.Close()) // the end
	file := filepath.Join(t.TempDir(), "hand.tar")
	is.NoErr(os.WriteFile(file, b.Bytes(), 0o600))
	return file
}

// wharf runs the command line args and returns what it wrote on stderr
// and its error.
func wharf(t *testing.T, args ...string) (string, error) {
	stderr := newOutput()
	err := run(testContext(t), args, envOf(nil), strings.NewReader(""), io.Discard, stderr)
	return stderr.String(), err
}

// TestBackupAndRestoreRefuseWhatWouldLoseOrLeakData runs wharf backup and
// wharf restore where they must refuse: each says why, writes no archive
// and leaves every state directory as it was.
func TestBackupAndRestoreRefuseWhatWouldLoseOrLeakData(t *testing.T) {
	t.Run("a backup onto an existing file", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		dir, _ := stateWithTokens(t)
		file := filepath.Join(t.TempDir(), "b.tar")
		is.NoErr(os.WriteFile(file, []byte("an older backup"), 0o600))
		_, err := wharf(t, "backup", file, "--state-dir", dir)
		is.True(err != nil && strings.Contains(err.Error(), "already exists")) // refused
		data, err := os.ReadFile(file)
		is.NoErr(err)                             // the file is still there
		is.Equal(string(data), "an older backup") // unchanged
	})
	t.Run("a backup of a damaged database", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		dir, ids := stateWithTokens(t)
		sqlitetest.CorruptIndex(t, filepath.Join(dir, "wharf.db"), "sqlite_autoindex_credentials_1", ids[1])
		file := filepath.Join(t.TempDir(), "b.tar")
		_, err := wharf(t, "backup", file, "--state-dir", dir)
		is.True(err != nil && strings.Contains(err.Error(), "integrity check")) // refused, saying why
		_, err = os.Stat(file)
		is.True(errors.Is(err, os.ErrNotExist)) // no archive
		left, err := filepath.Glob(filepath.Join(dir, ".backup-*"))
		is.NoErr(err)          // look for the snapshot
		is.Equal(len(left), 0) // removed
	})
	t.Run("a restore of a damaged database", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		dir, ids := stateWithTokens(t)
		sqlitetest.CorruptIndex(t, filepath.Join(dir, "wharf.db"), "sqlite_autoindex_credentials_1", ids[1])
		db, err := os.ReadFile(filepath.Join(dir, "wharf.db"))
		is.NoErr(err) // the damaged database
		file := tarOf(t, [2]string{"manifest.json", fmt.Sprintf(`{"format":1,"schema":%d,"files":["wharf.db"]}`, sqlite.LatestSchema())},
			[2]string{"wharf.db", string(db)})
		restored := filepath.Join(t.TempDir(), "restored")
		_, err = wharf(t, "restore", file, "--state-dir", restored)
		is.True(err != nil && strings.Contains(err.Error(), "integrity check")) // refused, saying why
		_, err = os.Stat(filepath.Join(restored, "wharf.db"))
		is.True(errors.Is(err, os.ErrNotExist)) // no database took its place
	})
	t.Run("a restore of an entry out of the state directory", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		dir, _ := stateWithTokens(t)
		file := filepath.Join(t.TempDir(), "b.tar")
		_, err := wharf(t, "backup", file, "--state-dir", dir)
		is.NoErr(err) // a real backup
		data, err := os.ReadFile(file)
		is.NoErr(err) // read it
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		tr := tar.NewReader(bytes.NewReader(data))
		for { // copy it, adding an entry that climbs out
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			is.NoErr(err)               // an entry
			is.NoErr(tw.WriteHeader(h)) // copied
			_, err = io.Copy(tw, tr)
			is.NoErr(err) // with its body
		}
		is.NoErr(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "../escaped", Size: 1, Mode: 0o600}))
		_, err = tw.Write([]byte("x"))
		is.NoErr(err)        // the climbing entry
		is.NoErr(tw.Close()) // the end
		evil := filepath.Join(t.TempDir(), "evil.tar")
		is.NoErr(os.WriteFile(evil, b.Bytes(), 0o600))
		parent := t.TempDir()
		restored := filepath.Join(parent, "restored")
		_, err = wharf(t, "restore", evil, "--state-dir", restored)
		is.True(err != nil && strings.Contains(err.Error(), "no part of a Wharf backup")) // refused
		_, err = os.Stat(filepath.Join(parent, "escaped"))
		is.True(errors.Is(err, os.ErrNotExist)) // nothing landed outside
		_, err = os.Stat(filepath.Join(restored, "wharf.db"))
		is.True(errors.Is(err, os.ErrNotExist)) // nor inside
	})
	t.Run("a restore into a state directory in use", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		src, _ := stateWithTokens(t)
		file := filepath.Join(t.TempDir(), "b.tar")
		_, err := wharf(t, "backup", file, "--state-dir", src)
		is.NoErr(err) // a real backup
		dir, _ := stateWithTokens(t)
		before, err := os.ReadFile(filepath.Join(dir, "wharf.db"))
		is.NoErr(err) // the directory's database
		_, err = wharf(t, "restore", file, "--state-dir", dir)
		is.True(err != nil && strings.Contains(err.Error(), "not empty")) // refused
		after, err := os.ReadFile(filepath.Join(dir, "wharf.db"))
		is.NoErr(err)           // still there
		is.Equal(after, before) // unchanged

		d, err := daemon.Open(testContext(t), daemon.Config{StateDir: dir})
		is.NoErr(err) // a daemon serving it
		defer d.Close()
		_, err = wharf(t, "restore", file, "--state-dir", dir)
		is.True(err != nil && strings.Contains(err.Error(), "another wharf")) // refused, naming the holder
	})
	t.Run("a command line without FILE", func(t *testing.T) {
		t.Parallel()
		is := is.New(t)
		for _, cmd := range []string{"backup", "restore"} {
			_, err := wharf(t, cmd, "--state-dir", t.TempDir())
			var ue usageError
			is.True(errors.As(err, &ue)) // a usage error: exit 2
		}
	})
}
