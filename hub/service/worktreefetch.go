package service

import (
	"context"
	"errors"
	"log/slog"

	"github.com/wharfhub/wharf/hub"
)

// FetchWorktreeRefs fetches the remotes of the source's repository once
// (hubFetchWorktreeRefs), lending git what the main workspace is assigned
// and nothing ambient: its grant brokers the fetch as it brokers the
// workspace's session, against the catalog as it is, each use logged
// against the main workspace. The refs are read again whether or not the
// fetch succeeded (a partial fetch may have updated some); refsRead is
// false when the refusal came before any repository read.
func (h *Hub) FetchWorktreeRefs(ctx context.Context, caller hub.DeviceSession, source string) (refs hub.WorktreeRefs, refusal *hub.WorktreeError, refsRead bool, err error) {
	f, refusal, err := h.family(ctx, source)
	if err != nil || refusal != nil {
		return hub.WorktreeRefs{}, sanitized(refusal), false, err
	}
	unlock, err := h.wtLocks.Lock(ctx, f.repoID)
	if err != nil {
		return hub.WorktreeRefs{}, nil, false, hub.Wrap(hub.Unavailable, err, "request cancelled")
	}
	defer unlock()
	var sc hub.SessionCredentials
	var g *grant
	if f.main.Path == f.mainPath { // the main checkout is a workspace: its assignments apply
		sc, g, err = h.lend(ctx, f.main.ID)
		if err != nil {
			return hub.WorktreeRefs{}, nil, false, err
		}
		defer g.close()
	}
	ferr := f.pl.git.Fetch(ctx, f.mainPath, sc)
	if ferr == nil {
		h.wt.setFetched(f.repoID, h.clock.Now().UnixMilli())
	}
	refs, rerr := h.refs(ctx, f)
	if rerr != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "git could not list a repository's branches", slog.Any("err", rerr))
		return hub.WorktreeRefs{}, wtErrorf(hub.WTInventoryUnavailable, "The branches of this repository could not be read.").WithRetry(hub.WTRetryRefresh), false, nil
	}
	if ferr == nil {
		return refs, nil, true, nil
	}
	h.log.LogAttrs(ctx, slog.LevelInfo, "a worktree fetch failed", slog.String("workspace", f.main.ID), slog.Any("err", ferr))
	var fe *hub.FetchError
	if !errors.As(ferr, &fe) && hub.KindOf(ferr) == hub.Invalid {
		// The machine refused to fetch (a host place that cannot be
		// lent credentials): its message says what to do instead.
		return refs, wtErrorf(hub.WTInvalidInput, hub.MessageOf(ferr)), true, nil
	}
	if fe != nil && fe.Authentication {
		return refs, wtErrorf(hub.WTFetchAuthentication, "The remote refused the credentials this workspace is assigned, or asked for ones it has none of."), true, nil
	}
	return refs, wtErrorf(hub.WTFetchNetwork, "The remote could not be reached.").WithRetry(hub.WTRetryFetch), true, nil
}
