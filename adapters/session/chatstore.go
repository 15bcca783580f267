package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

// conversationsFile is the inventory's file in the workspace's data
// directory.
const conversationsFile = "conversations.json"

// fileStore is the hub.ConversationStore of a child: one JSON file in the
// workspace's private data directory (mode 0700, made by the Hub), written
// whole to a temporary file, synced and renamed over the old one, so a
// crash leaves the old inventory or the new one. With no directory it
// keeps the inventory in memory only.
type fileStore struct {
	dir string

	mu     sync.Mutex
	memory []hub.ConversationRecord
}

// inventoryFile is the file's layout: versioned, so a later build can
// read an earlier one.
type inventoryFile struct {
	Version       int                      `json:"version"`
	Conversations []hub.ConversationRecord `json:"conversations"`
}

func (s *fileStore) LoadConversations() ([]hub.ConversationRecord, error) {
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
	return f.Conversations, nil
}

func (s *fileStore) SaveConversations(records []hub.ConversationRecord) error {
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
	tmp, err := os.CreateTemp(s.dir, conversationsFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up a failure
	if _, err := tmp.Write(b); err != nil {
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
	if err := os.Rename(tmp.Name(), filepath.Join(s.dir, conversationsFile)); err != nil {
		return err
	}
	d, err := os.Open(s.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
