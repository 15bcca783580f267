package hub_test

import (
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/matryer/is"

	apidoc "github.com/wharfhub/wharf/api"
	"github.com/wharfhub/wharf/hub"
)

// TestTheTopicTableIsTheContracts holds the table to the contract's
// Topics table (hub-interface, "Live channel"), copied here row by row:
// Topic | Domain | Key | Data schema | Cursor. The Key column names the
// key; whether it may be left out is the LiveSubscription schema's, which
// TestTheTopicTableIsTheContractDocuments checks.
func TestTheTopicTableIsTheContracts(t *testing.T) {
	t.Parallel()
	rows := []struct {
		topic, domain, key, data, cursor string
	}{
		{"document", "workspace", "watch context (LiveDocumentKey)", "DocumentUpdate", "hub"},
		{"inventory", "workspace", "none", "ConversationInventoryEvent", "hub"},
		{"conversation", "workspace", "conversation id (LiveConversationKey)", "ChatEvent", "workspace"},
		{"activity", "hub", "none", "WorkspaceActivity", "hub"},
		{"worktrees", "hub", "none", "WorktreeInventoryEvent", "none"},
	}
	topics := hub.Topics()
	if len(topics) != len(rows) {
		t.Fatalf("the table has %d topics, the contract %d", len(topics), len(rows))
	}
	for i, row := range rows {
		t.Run(row.topic, func(t *testing.T) {
			is := is.New(t)
			s := topics[i]
			is.Equal(string(s.Name), row.topic)          // in the contract's order
			is.Equal(s.Domain.String(), row.domain)      // made where the contract says
			is.Equal(s.Keyed(), row.key != "none")       // keyed as the contract says
			is.Equal(s.Data, row.data)                   // carrying the contract's schema
			is.Equal(s.Cursor.String(), row.cursor)      // with cursors made by whom the contract says
			is.Equal(s.HubWide, row.topic == "activity") // only activity is Hub-wide (rule 2 of the live stream)
			got, ok := hub.LookupTopic(s.Name)
			is.True(ok)      // found by name
			is.Equal(got, s) // as listed
		})
	}
}

// TestTheTopicTableIsTheContractDocuments holds the table to
// api/openapi.yaml: LiveTopic lists the topics in the table's order, each
// data schema exists, and LiveSubscription has a branch exactly for each
// subscribable topic, taking a key where the topic is keyed and requiring
// it where the key is required.
func TestTheTopicTableIsTheContractDocuments(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	doc, err := openapi3.NewLoader().LoadFromData(apidoc.OpenAPI)
	is.NoErr(err) // the contract loads
	schemas := doc.Components.Schemas

	var enum []string
	for _, v := range schemas["LiveTopic"].Value.Enum {
		enum = append(enum, v.(string))
	}
	var names []string
	for _, s := range hub.Topics() {
		names = append(names, string(s.Name))
		is.True(schemas[s.Data] != nil) // the data schema is the contract's
	}
	is.Equal(names, enum) // LiveTopic is the table, in order

	branches := map[string]*openapi3.Schema{}
	for _, ref := range schemas["LiveSubscription"].Value.OneOf {
		topic := ref.Value.Properties["topic"].Value.Const
		branches[topic.(string)] = ref.Value
	}
	for _, s := range hub.Topics() {
		b := branches[string(s.Name)]
		is.Equal(b != nil, s.Subscribable()) // subscribable exactly where the contract has a branch
		if b == nil {
			continue
		}
		is.Equal(b.Properties["key"] != nil, s.Keyed())                        // a key where keyed
		is.Equal(slices.Contains(b.Required, "key"), s.Key == hub.KeyRequired) // required where required
		is.True(b.Properties["cursor"] != nil)                                 // every subscription may carry a cursor
		delete(branches, string(s.Name))
	}
	is.Equal(len(branches), 0) // no subscription of a topic the table lacks
}

func TestLookupTopicKnowsOnlyTheTable(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for _, name := range []hub.Topic{"", "weather", "Document", "document ", "hub"} {
		_, ok := hub.LookupTopic(name)
		is.True(!ok) // not a topic
	}
	topics := hub.Topics()
	topics[0].Name = "changed"
	is.Equal(hub.Topics()[0].Name, hub.TopicDocument) // the caller's copy, not the table
}

func TestSubscriptionTopicErrorListsTheSubscribableTopics(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	err := hub.SubscriptionTopicError()
	is.Equal(hub.KindOf(err), hub.Invalid)                                                                     // a 400
	is.Equal(hub.MessageOf(err), "subscription topic must be document, inventory, conversation, or worktrees") // the contract's message
}

func TestTopicTableFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		topic                        hub.Topic
		subscribable, keyed, resumes bool
		key                          hub.KeyRule
		feed                         bool
	}{
		{hub.TopicDocument, true, true, false, hub.KeyOptional, true},
		{hub.TopicInventory, true, false, false, hub.KeyNone, true},
		{hub.TopicConversation, true, true, true, hub.KeyRequired, true},
		{hub.TopicActivity, false, false, false, hub.KeyNone, true},
		{hub.TopicWorktrees, true, false, false, hub.KeyNone, false},
	} {
		t.Run(string(tc.topic), func(t *testing.T) {
			is := is.New(t)
			s, ok := hub.LookupTopic(tc.topic)
			is.True(ok)                                 // in the table
			is.Equal(s.Subscribable(), tc.subscribable) // named in subs, or not
			is.Equal(s.Keyed(), tc.keyed)               // takes a key, or not
			is.Equal(s.Key, tc.key)                     // of this rule
			is.Equal(s.Resumes(), tc.resumes)           // its feed resumes from a cursor, or not
			is.Equal(s.Feed, tc.feed)                   // a workspace session serves its feed, or the Hub answers it alone
		})
	}
}
