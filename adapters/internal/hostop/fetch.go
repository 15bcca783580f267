package hostop

import (
	"context"
	"errors"
	"io"

	"github.com/wharfhub/wharf/adapters/internal/credenv"
	"github.com/wharfhub/wharf/hub"
)

// A fetch on the host lent credentials: the request (lentRequest, run
// "fetch") on a stream of its own, lent as a clone is (clone.go), and one
// answer, how git ended. Whether it failed for authentication is told
// on both ends, without git's messages (gitexec's worktree_fetch.go):
// the server knows whether git ran its askpass program; the Hub knows
// whether its credential helper asked for the token or ssh used the
// agent, since both are served here, and watches them (credenv.Watch).

// fetchLent fetches the repository at dir on the host, lent creds.
func (c *Client) fetchLent(ctx context.Context, dir string, creds hub.SessionCredentials) error {
	if c.opts.Lend == nil {
		return errFetchLent
	}
	seen := credenv.Watch(creds.Broker)
	if creds.Broker != nil {
		creds.Broker = seen
	}
	s, lent, err := c.opts.Lend(ctx, creds, GitCommand)
	if err != nil {
		return err
	}
	defer s.Close()
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	if err := writeFrame(s, lentRequest{Protocol: Protocol, Run: runFetch, Dir: dir, Lent: lent}); err != nil {
		return errUnavailable(err)
	}
	for {
		b, err := readFrame(s)
		if err != nil {
			if ctx.Err() != nil {
				return hub.Wrap(hub.Unavailable, ctx.Err(), "the fetch was cancelled")
			}
			return &hub.FetchError{Err: hub.Wrap(hub.Unavailable, err, "the connection to the host was lost during the fetch")}
		}
		var f lentFrame
		if err := decodeStrict(b, &f); err != nil {
			return errUnavailable(err)
		}
		if !f.Done {
			continue
		}
		err = fromWire(f.Err)
		var fe *hub.FetchError
		if errors.As(err, &fe) && !fe.Authentication && seen.Used() {
			// Refused after the Hub lent what was asked: the
			// credentials, not the network.
			return hub.Wrap(hub.Unavailable, &hub.FetchError{Authentication: true, Err: fe.Err}, "the remote refused the credentials")
		}
		return err
	}
}

// serveFetch runs a fetch and answers how it ended.
func serveFetch(ctx context.Context, r io.Reader, w io.Writer, git LentGit, req lentRequest) error {
	// The end of the client's frames cancels the fetch.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, r)
		cancel()
	}()
	err := git.FetchLent(ctx, req.Dir, req.Lent)
	return writeFrame(w, lentFrame{Done: true, Err: toWire(err)})
}
