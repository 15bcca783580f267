package session

import (
	"os"
	"path/filepath"
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
