package hostop

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/wharfhub/wharf/hub"
)

// The worktree family on the host: hub.WorktreeGit's methods, each an
// operation whose arguments and result cross as JSON (request.Args,
// response.Result), run on the server by the very gitexec code the Hub
// runs at home. A Fetch lent credentials runs on a stream of its own
// (fetch.go), as a clone does (clone.go).

var errNoGit = hub.Errorf(hub.Unavailable, "git is not available on this host")

// errClone refuses a clone on a Client without Options.Lend.
var errClone = hub.Errorf(hub.Invalid, "cloning onto this machine is not supported")

var errFetchLent = hub.Errorf(hub.Invalid,
	"fetching with the Hub's credentials on this machine is not supported: fetch in a terminal of the workspace's session there")

// The operations' arguments.
type (
	dirArgs     struct{ Dir string }
	stampArgs   struct{ GitDir, Token string }
	removeArgs  struct{ Main, Dir string }
	removeFArgs struct {
		Main, Dir string
		Force     bool
	}
	refsResult  struct{ Local, Remote []string }
	stampResult struct{ Stamp string }
)

// worktreeOp is a server handler: its arguments already decoded.
type worktreeOp func(ctx context.Context, git hub.GitRunner, args []byte) (any, error)

// with decodes an operation's arguments strictly into A (anything
// malformed, an unknown field included, is Invalid and reaches no git)
// and runs f on them.
func with[A any](f func(ctx context.Context, git hub.GitRunner, a A) (any, error)) worktreeOp {
	return func(ctx context.Context, git hub.GitRunner, b []byte) (any, error) {
		var a A
		if err := decodeStrict(b, &a); err != nil {
			return nil, hub.Wrap(hub.Invalid, err, "malformed arguments")
		}
		return f(ctx, git, a)
	}
}

// worktreeOps are the server's handlers, by operation; each returns its
// result (nil for none).
var worktreeOps = map[string]worktreeOp{
	"listWorktrees": with(func(ctx context.Context, git hub.GitRunner, a dirArgs) (any, error) {
		return git.ListWorktrees(ctx, a.Dir)
	}),
	"refs": with(func(ctx context.Context, git hub.GitRunner, a dirArgs) (any, error) {
		local, remote, err := git.Refs(ctx, a.Dir)
		return refsResult{local, remote}, err
	}),
	"addWorktree": with(func(ctx context.Context, git hub.GitRunner, a hub.AddWorktreeRequest) (any, error) {
		return nil, git.AddWorktree(ctx, a)
	}),
	"checkOutWorktree": with(func(ctx context.Context, git hub.GitRunner, a dirArgs) (any, error) {
		return nil, git.CheckOutWorktree(ctx, a.Dir)
	}),
	"readStamp": with(func(ctx context.Context, git hub.GitRunner, a stampArgs) (any, error) {
		stamp, err := git.ReadStamp(ctx, a.GitDir)
		return stampResult{stamp}, err
	}),
	"writeStamp": with(func(ctx context.Context, git hub.GitRunner, a stampArgs) (any, error) {
		return nil, git.WriteStamp(ctx, a.GitDir, a.Token)
	}),
	"inspectTree": with(func(ctx context.Context, git hub.GitRunner, a dirArgs) (any, error) {
		return git.InspectTree(ctx, a.Dir)
	}),
	"removeWorktree": with(func(ctx context.Context, git hub.GitRunner, a removeFArgs) (any, error) {
		return nil, git.RemoveWorktree(ctx, a.Main, a.Dir, a.Force)
	}),
	"discardWorktree": with(func(ctx context.Context, git hub.GitRunner, a removeArgs) (any, error) {
		return nil, git.DiscardWorktree(ctx, a.Main, a.Dir)
	}),
	"fetch": with(func(ctx context.Context, git hub.GitRunner, a dirArgs) (any, error) {
		return nil, git.Fetch(ctx, a.Dir, hub.SessionCredentials{}) // lent nothing: the client refuses more
	}),
}

// worktree answers a worktree operation with run; a result is sent even
// beside an error (Refs', say).
func (s *server) worktree(ctx context.Context, req request, run worktreeOp) response {
	if s.git == nil {
		return response{Err: toWire(errNoGit)}
	}
	result, err := run(ctx, s.git, req.Args)
	resp := response{Err: toWire(err)}
	if result != nil {
		b, merr := json.Marshal(result)
		if merr != nil {
			return response{Err: toWire(hub.Wrap(hub.Internal, merr, "the answer could not be encoded"))}
		}
		resp.Result = b
	}
	return resp
}

// worktreeCall runs op with args on the host and decodes its result into
// out (nil: none); the operation's own error is returned.
func (c *Client) worktreeCall(ctx context.Context, op string, args, out any) error {
	b, err := json.Marshal(args)
	if err != nil {
		return hub.Wrap(hub.Internal, err, "the request could not be encoded")
	}
	resp, err := c.call(ctx, request{Op: op, Args: b})
	if err != nil {
		return err
	}
	if out != nil && len(resp.Result) > 0 {
		if derr := decodeStrict(resp.Result, out); derr != nil {
			return errUnavailable(errors.Join(errors.New("a malformed answer"), derr))
		}
	}
	return fromWire(resp.Err)
}

// ListWorktrees lists the checkouts of the repository holding dir.
func (c *Client) ListWorktrees(ctx context.Context, dir string) (hub.WorktreeListing, error) {
	var out hub.WorktreeListing
	err := c.worktreeCall(ctx, "listWorktrees", dirArgs{dir}, &out)
	return out, err
}

// Refs lists the repository's local and remote-tracking branches.
func (c *Client) Refs(ctx context.Context, dir string) (local, remote []string, err error) {
	var out refsResult
	err = c.worktreeCall(ctx, "refs", dirArgs{dir}, &out)
	return out.Local, out.Remote, err
}

// AddWorktree makes a linked tree on the host.
func (c *Client) AddWorktree(ctx context.Context, req hub.AddWorktreeRequest) error {
	return c.worktreeCall(ctx, "addWorktree", req, nil)
}

// CheckOutWorktree checks the linked tree at dir out again.
func (c *Client) CheckOutWorktree(ctx context.Context, dir string) error {
	return c.worktreeCall(ctx, "checkOutWorktree", dirArgs{dir}, nil)
}

// ReadStamp reads the identity stamp of the tree whose git directory is
// gitDir.
func (c *Client) ReadStamp(ctx context.Context, gitDir string) (string, error) {
	var out stampResult
	err := c.worktreeCall(ctx, "readStamp", stampArgs{GitDir: gitDir}, &out)
	return out.Stamp, err
}

// WriteStamp writes token as the stamp of the tree whose git directory
// is gitDir.
func (c *Client) WriteStamp(ctx context.Context, gitDir, token string) error {
	return c.worktreeCall(ctx, "writeStamp", stampArgs{GitDir: gitDir, Token: token}, nil)
}

// InspectTree reports what deleting the linked tree at dir would meet.
func (c *Client) InspectTree(ctx context.Context, dir string) (hub.TreeFacts, error) {
	var out hub.TreeFacts
	err := c.worktreeCall(ctx, "inspectTree", dirArgs{dir}, &out)
	return out, err
}

// RemoveWorktree removes the linked tree at dir from main.
func (c *Client) RemoveWorktree(ctx context.Context, main, dir string, force bool) error {
	return c.worktreeCall(ctx, "removeWorktree", removeFArgs{Main: main, Dir: dir, Force: force}, nil)
}

// DiscardWorktree removes a linked tree git did not finish making.
func (c *Client) DiscardWorktree(ctx context.Context, main, dir string) error {
	return c.worktreeCall(ctx, "discardWorktree", removeArgs{Main: main, Dir: dir}, nil)
}

// Fetch fetches the repository's remotes on the host: lent nothing, as
// an operation; lent credentials, on a stream of its own (fetch.go), or
// refused (Invalid) by a Client without Options.Lend.
func (c *Client) Fetch(ctx context.Context, dir string, creds hub.SessionCredentials) error {
	if !creds.Empty() {
		return c.fetchLent(ctx, dir, creds)
	}
	return c.worktreeCall(ctx, "fetch", dirArgs{dir}, nil)
}
