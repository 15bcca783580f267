package fakes

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// An unscripted session has a canned feed of exactly the topics the topic
// table gives a feed: a topic added to the table fails here until the
// fake can serve it.
func TestEveryFeedOfTheTopicTableIsCanned(t *testing.T) {
	is := is.New(t)
	feeds := 0
	for _, s := range hub.Topics() {
		_, canned := cannedFeeds[s.Name]
		is.Equal(canned, s.Feed) // canned exactly where the table gives a feed
		if s.Feed {
			feeds++
		}
	}
	is.Equal(len(cannedFeeds), feeds) // and for no topic the table lacks
}
