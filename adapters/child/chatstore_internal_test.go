package child

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub/chat"
)

func TestFileStoreKeepsTheInventory(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	s := &fileStore{dir: dir}
	got, err := s.LoadConversations()
	is.NoErr(err)         // nothing stored yet is no error
	is.Equal(len(got), 0) // and no conversation
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	recs := []chat.ConversationRecord{{ID: "a:1", AgentID: "a", SessionID: "1", Title: "one", CreatedAt: at, UpdatedAt: at, Model: "m"}}
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
	porttest.ConversationStore(t, func(t *testing.T) func() chat.ConversationStore {
		dir := t.TempDir()
		return func() chat.ConversationStore { return &fileStore{dir: dir} }
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
	rec := chat.ConversationRecord{ID: "a:1", AgentID: "a", SessionID: "1", CreatedAt: at, UpdatedAt: at, Held: []chat.HeldMessageRecord{
		{ID: "message:1", Text: "one", QueuedAt: at, Images: []chat.HeldImage{{Key: keyA, MimeType: "image/png", Data: []byte("png")}}},
		{ID: "message:2", Text: "two", QueuedAt: at, Images: []chat.HeldImage{{Key: keyB, MimeType: "image/png", Data: []byte("gif")}}},
		{ID: "message:3", Text: "three", QueuedAt: at},
	}}
	is.NoErr(s.SaveConversations([]chat.ConversationRecord{rec}))
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
	bad.Held = []chat.HeldMessageRecord{{ID: "message:4", Text: "x", QueuedAt: at, Images: []chat.HeldImage{{Key: "../../etc/passwd", Data: []byte("x")}}}}
	is.True(s.SaveConversations([]chat.ConversationRecord{bad}) != nil) // a key that is not ours is refused

	rec.Held = nil
	is.NoErr(s.SaveConversations([]chat.ConversationRecord{rec})) // every message delivered
	entries, err := os.ReadDir(filepath.Join(dir, heldDir))
	is.NoErr(err)
	is.Equal(len(entries), 0) // no image left behind
}

// copyDir copies the files of src (one level of directories) into a new
// directory: what a crash leaves of a data directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// A message held with an image survives a crash of the child through the
// data directory, and the next child delivers it, image and all.
func TestAHeldMessageSurvivesACrashThroughTheDataDirectory(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	rt := fakes.NewAgentRuntime(chat.AgentDescriptor{ID: "scripted", Name: "Scripted", Availability: chat.AgentAvailable})
	start := func(dir string) *chat.Manager {
		m, err := chat.New(chat.Config{Runtime: rt, Store: &fileStore{dir: dir}, Dir: t.TempDir()})
		is.NoErr(err)
		t.Cleanup(m.Close)
		return m
	}
	turn := func() *fakes.AgentTurn {
		select {
		case tn := <-rt.Turns:
			return tn
		case <-time.After(10 * time.Second):
			t.Fatal("no turn reached the agent")
			return nil
		}
	}
	m := start(dir)
	s, err := m.Create(t.Context(), "scripted", "")
	is.NoErr(err)
	_, err = m.Send(t.Context(), s.ID, chat.Message{Text: "first"})
	is.NoErr(err)
	turn() // runs when the child crashes
	png := []byte("\x89PNG\r\n\x1a\n an image")
	res, err := m.Send(t.Context(), s.ID, chat.Message{Text: "second", Attachments: []chat.Attachment{{Name: "a.png", Data: png}}})
	is.NoErr(err)
	is.True(res.Held)

	crashed := copyDir(t, dir) // the crash: what the disk holds now
	m.Close()
	next := start(crashed)
	got := turn()
	is.Equal(got.Prompt.Text, "second")                      // the held message is delivered
	is.Equal(len(got.Prompt.Images), 1)                      // with its image
	is.Equal(string(got.Prompt.Images[0].Data), string(png)) // whole
	got.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	snap, err := next.Snapshot(s.ID)
	is.NoErr(err)
	is.Equal(len(snap.Queued), 0) // once
}
