package child

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/wharfhub/wharf/hub/chat"
)

// conversationsFile is the inventory's file in the workspace's data
// directory.
const conversationsFile = "conversations.json"

// heldDir is the directory of held images in the data directory: one
// file per image, named by its key (hub.HeldImage.Key), mode 0600.
const heldDir = "held"

// maxHeldImageFile bounds an image file read back: larger than any image
// a message may carry (10 MiB), so a larger file is not one of ours.
const maxHeldImageFile = 16 << 20

// fileStore is the chat.ConversationStore of a child: one JSON file in the
// workspace's private data directory (mode 0700, made by the Hub), written
// whole to a temporary file, synced and renamed over the old one, so a
// crash leaves the old inventory or the new one. Held images live beside
// it in held/, one file per key, written (synced) before the inventory
// that names them and removed after the inventory that no longer does,
// so every inventory a crash leaves finds its images. With no directory
// it keeps the inventory in memory only.
type fileStore struct {
	dir string
	log *slog.Logger // nil: discards

	mu     sync.Mutex
	memory []chat.ConversationRecord
}

// inventoryFile is the file's layout: versioned, so a later build can
// read an earlier one.
type inventoryFile struct {
	Version       int                       `json:"version"`
	Conversations []chat.ConversationRecord `json:"conversations"`
}

func (s *fileStore) LoadConversations() ([]chat.ConversationRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" {
		return s.memory, nil
	}
	b, err := os.ReadFile(filepath.Join(s.dir, conversationsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f inventoryFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", conversationsFile, err)
	}
	for i := range f.Conversations {
		s.readHeld(&f.Conversations[i])
	}
	return f.Conversations, nil
}

// readHeld reads the images of r's held messages; a message whose image
// cannot be read back is left out, never delivered without it.
func (s *fileStore) readHeld(r *chat.ConversationRecord) {
	kept := r.Held[:0:0]
	for _, h := range r.Held {
		ok := true
		for j := range h.Images {
			data, err := s.readImage(h.Images[j].Key)
			if err != nil {
				s.logger().Error("a held message is lost: its image cannot be read back", "conversation", r.ID, "err", err)
				ok = false
				break
			}
			h.Images[j].Data = data
		}
		if ok {
			kept = append(kept, h)
		}
	}
	r.Held = kept
}

// readImage reads the held image key: a regular file (no link), at most
// maxHeldImageFile bytes.
func (s *fileStore) readImage(key string) ([]byte, error) {
	if !validKey(key) {
		return nil, fmt.Errorf("held image key %q is not one of ours", key)
	}
	f, err := os.OpenFile(filepath.Join(s.dir, heldDir, key), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxHeldImageFile+1))
	if err == nil && len(data) > maxHeldImageFile {
		err = fmt.Errorf("held image %s is larger than %d bytes", key, maxHeldImageFile)
	}
	return data, err
}

// writeImages writes the held images of records not yet on disk, synced,
// and returns the keys of every image they hold.
func (s *fileStore) writeImages(records []chat.ConversationRecord) (map[string]bool, error) {
	keys := map[string]bool{}
	dir := filepath.Join(s.dir, heldDir)
	wrote := false
	for _, r := range records {
		for _, h := range r.Held {
			for _, img := range h.Images {
				if !validKey(img.Key) {
					return nil, fmt.Errorf("held image key %q is not 32 hex digits", img.Key)
				}
				if keys[img.Key] {
					continue
				}
				keys[img.Key] = true
				if fi, err := os.Lstat(filepath.Join(dir, img.Key)); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(img.Data)) {
					continue // written by an earlier save: an image never changes under its key
				}
				if err := os.MkdirAll(dir, 0o700); err != nil {
					return nil, err
				}
				if err := writeSynced(dir, img.Key, img.Data); err != nil {
					return nil, err
				}
				wrote = true
			}
		}
	}
	if wrote {
		return keys, syncDir(dir)
	}
	return keys, nil
}

// removeImages removes the held images no key names, once the inventory
// that names only keys is saved. Best effort: a file left over is removed
// by a later save.
func (s *fileStore) removeImages(keys map[string]bool) {
	dir := filepath.Join(s.dir, heldDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !keys[e.Name()] {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				s.logger().Warn("a held image that is no longer held could not be removed", "err", err)
			}
		}
	}
}

// validKey reports whether key is 32 lower-case hex digits: a file name
// with nothing to escape.
func validKey(key string) bool {
	if len(key) != 32 {
		return false
	}
	for _, c := range []byte(key) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func (s *fileStore) logger() *slog.Logger {
	if s.log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.log
}

func (s *fileStore) SaveConversations(records []chat.ConversationRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" {
		s.memory = records
		return nil
	}
	b, err := json.Marshal(inventoryFile{Version: 1, Conversations: records})
	if err != nil {
		return err
	}
	keys, err := s.writeImages(records)
	if err != nil {
		return err
	}
	if err := writeSynced(s.dir, conversationsFile, b); err != nil {
		return err
	}
	if err := syncDir(s.dir); err != nil {
		return err
	}
	s.removeImages(keys)
	return nil
}

// writeSynced writes data as dir/name through a synced temporary file
// renamed over it; the caller syncs dir.
func writeSynced(dir, name string, data []byte) error {
	tmp, err := os.CreateTemp(dir, name+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up a failure
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}

// syncDir makes the entries of dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
