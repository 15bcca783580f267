package hostop

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// A worktree operation's malformed arguments are refused as Invalid and
// reach no git: a syntax error, a wrong type, an unknown field, trailing
// data, none at all.
func TestMalformedWorktreeArgumentsAreInvalid(t *testing.T) {
	s := &server{git: fakes.NewGit(fakes.NewFS("/home/ann"))}
	for _, args := range []string{`{`, `{"Dir":1}`, `{"Dir":"/","Extra":true}`, `{"Dir":"/"} {}`, ``} {
		is := is.New(t)
		resp := s.worktree(context.Background(), request{Op: "listWorktrees", Args: []byte(args)}, worktreeOps["listWorktrees"])
		err := fromWire(resp.Err)
		is.Equal(hub.KindOf(err), hub.Invalid) // refused
		is.Equal(hub.MessageOf(err), "malformed arguments")
	}
}
