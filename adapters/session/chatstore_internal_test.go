package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

func TestFileStoreKeepsTheInventory(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	s := &fileStore{dir: dir}
	got, err := s.LoadConversations()
	is.NoErr(err)         // nothing stored yet is no error
	is.Equal(len(got), 0) // and no conversation
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	recs := []hub.ConversationRecord{{ID: "a:1", AgentID: "a", SessionID: "1", Title: "one", CreatedAt: at, UpdatedAt: at, Model: "m"}}
	is.NoErr(s.SaveConversations(recs))
	got, err = (&fileStore{dir: dir}).LoadConversations() // as a new child reads it
	is.NoErr(err)
	is.Equal(len(got), 1)               // kept
	is.Equal(got[0].Title, "one")       // whole
	is.True(got[0].CreatedAt.Equal(at)) // with its times
	fi, err := os.Stat(filepath.Join(dir, conversationsFile))
	is.NoErr(err)
	is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // private
	entries, _ := os.ReadDir(dir)
	is.Equal(len(entries), 1) // no temporary file left behind

	is.NoErr(os.WriteFile(filepath.Join(dir, conversationsFile), []byte("{"), 0o600))
	_, err = s.LoadConversations()
	is.True(err != nil) // a broken file is an error, never an empty inventory

	mem := &fileStore{}
	is.NoErr(mem.SaveConversations(recs))
	got, _ = mem.LoadConversations()
	is.Equal(len(got), 1) // without a directory the inventory lives in memory
}

func TestFileStoreConformance(t *testing.T) {
	porttest.ConversationStore(t, func(t *testing.T) func() hub.ConversationStore {
		dir := t.TempDir()
		return func() hub.ConversationStore { return &fileStore{dir: dir} }
	})
}

// Held images are files of their own, private, removed once no
// inventory names them; a held message whose image is gone (or was
// never ours) is left out when the inventory is read back, the others
// kept.
func TestFileStoreKeepsHeldImagesApart(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	s := &fileStore{dir: dir}
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	keyA, keyB := strings.Repeat("a", 32), strings.Repeat("0", 32)
	rec := hub.ConversationRecord{ID: "a:1", AgentID: "a", SessionID: "1", CreatedAt: at, UpdatedAt: at, Held: []hub.HeldMessageRecord{
		{ID: "message:1", Text: "one", QueuedAt: at, Images: []hub.HeldImage{{Key: keyA, MimeType: "image/png", Data: []byte("png")}}},
		{ID: "message:2", Text: "two", QueuedAt: at, Images: []hub.HeldImage{{Key: keyB, MimeType: "image/png", Data: []byte("gif")}}},
		{ID: "message:3", Text: "three", QueuedAt: at},
	}}
	is.NoErr(s.SaveConversations([]hub.ConversationRecord{rec}))
	fi, err := os.Stat(filepath.Join(dir, heldDir))
	is.NoErr(err)
	is.Equal(fi.Mode().Perm(), os.FileMode(0o700)) // a private directory
	fi, err = os.Stat(filepath.Join(dir, heldDir, keyA))
	is.NoErr(err)
	is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // of private files
	b, err := os.ReadFile(filepath.Join(dir, conversationsFile))
	is.NoErr(err)
	is.True(!strings.Contains(string(b), "cG5n")) // the bytes are not in the inventory

	is.NoErr(os.Remove(filepath.Join(dir, heldDir, keyB))) // an image lost
	got, err := s.LoadConversations()
	is.NoErr(err)
	is.Equal(len(got[0].Held), 2)          // its message left out
	is.Equal(got[0].Held[0].Text, "one")   // the others kept
	is.Equal(got[0].Held[1].Text, "three") //
	is.Equal(string(got[0].Held[0].Images[0].Data), "png")

	bad := rec
	bad.Held = []hub.HeldMessageRecord{{ID: "message:4", Text: "x", QueuedAt: at, Images: []hub.HeldImage{{Key: "../../etc/passwd", Data: []byte("x")}}}}
	is.True(s.SaveConversations([]hub.ConversationRecord{bad}) != nil) // a key that is not ours is refused

	rec.Held = nil
	is.NoErr(s.SaveConversations([]hub.ConversationRecord{rec})) // every message delivered
	entries, err := os.ReadDir(filepath.Join(dir, heldDir))
	is.NoErr(err)
	is.Equal(len(entries), 0) // no image left behind
}
