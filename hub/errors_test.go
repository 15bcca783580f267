package hub_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

func TestKindOf(t *testing.T) {
	is := is.New(t)
	e := hub.Errorf(hub.Conflict, "destination already exists")
	wrapped := fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", e))
	is.Equal(hub.KindOf(wrapped), hub.Conflict)                    // kind survives wrapping
	is.Equal(hub.MessageOf(wrapped), "destination already exists") // message too
	is.Equal(hub.KindOf(errors.New("disk on fire")), hub.Internal) // foreign errors are Internal
	is.Equal(hub.MessageOf(errors.New("disk on fire")), "")        // with no public message
	cause := errors.New("secret cause")
	w := hub.Wrap(hub.Internal, cause, "could not save")
	is.True(errors.Is(w, cause))                 // cause reachable for logs
	is.Equal(hub.MessageOf(w), "could not save") // public message excludes the cause
	for _, k := range hub.Kinds() {
		is.True(k.String() != "" && k.String()[0] != 'K') // every kind has a name
	}
}
