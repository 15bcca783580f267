package fakes_test

import (
	"testing"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub/chat"
)

func TestConversationStoreConformance(t *testing.T) {
	porttest.ConversationStore(t, func(*testing.T) func() chat.ConversationStore {
		s := &fakes.ConversationStore{} // the same memory for every reopen
		return func() chat.ConversationStore { return s }
	})
}
