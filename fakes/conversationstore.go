package fakes

import (
	"slices"
	"sync"

	"github.com/wharfhub/wharf/hub/chat"
)

var _ chat.ConversationStore = (*ConversationStore)(nil)

// ConversationStore is a chat.ConversationStore in memory. Fail makes the
// next saves fail.
type ConversationStore struct {
	mu      sync.Mutex
	records []chat.ConversationRecord
	saves   int
	fail    error
}

// LoadConversations returns what was saved last.
func (s *ConversationStore) LoadConversations() ([]chat.ConversationRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.records), nil
}

// SaveConversations replaces the records, unless Fail set an error.
func (s *ConversationStore) SaveConversations(records []chat.ConversationRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.records = slices.Clone(records)
	s.saves++
	return nil
}

// Fail makes later saves fail with err (nil: succeed again).
func (s *ConversationStore) Fail(err error) { s.mu.Lock(); s.fail = err; s.mu.Unlock() }

// Saves counts the successful saves.
func (s *ConversationStore) Saves() int { s.mu.Lock(); defer s.mu.Unlock(); return s.saves }
