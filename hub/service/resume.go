package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// Sessions on hosts outlive the Hub. A local session ends with the Hub
// (its child reads the end of its stdin) and the next Hub starts it
// again: nothing is lost that a restart of the child would keep. A
// session on a host is someone's long build or agent turn on another
// machine, which a Hub's upgrade or crash must not end. So when the
// place of a workspace adopts sessions (hub.SessionAdopter):
//
//   - Close lets its session go (hub.SessionDetacher) instead of stopping
//     it; the workspace stays marked to start, as any running one;
//   - the next Hub, in the background of its start and holding the host's
//     workspace locks, first adopts the session of each workspace that
//     was running, then reaps what is left on the host (sessions of
//     workspaces it does not know, or that run another build), and only
//     then starts, afresh, those it could not adopt;
//   - a session no Hub adopts within the backend's grace ends by itself.
//
// A host that cannot be reached at the Hub's start is tried within
// hostResumeTimeout; its workspaces that were running are then recorded
// as stopped, as a local one that fails to start is.

// startHow says how startLocked gets its session.
type startHow int

const (
	startNew  startHow = iota // Backend.Start
	adoptOnly                 // SessionAdopter.Adopt; NotFound when there is nothing to adopt
)

// adopt is the place's Adopt of spec, NotFound when the place adopts
// nothing.
func adopt(ctx context.Context, pl place, spec hub.WorkspaceSessionSpec) (hub.WorkspaceSession, error) {
	a, ok := pl.backend.(hub.SessionAdopter)
	if !ok {
		return nil, hub.Errorf(hub.NotFound, "this machine's sessions end with the Hub")
	}
	return a.Adopt(ctx, spec)
}

// detacher is rs, when the Hub's close should let it go rather than stop
// it: its place adopts sessions and it can be let go of.
func detacher(pl place, rs hub.WorkspaceSession) hub.SessionDetacher {
	if _, ok := pl.backend.(hub.SessionAdopter); !ok {
		return nil
	}
	d, _ := rs.(hub.SessionDetacher)
	return d
}

// hostResumeTimeout bounds adopting, reaping and starting a host's
// sessions at the Hub's start.
const hostResumeTimeout = 2 * time.Minute

// resumeHost, in the background of the Hub's start, settles the folder
// journals an earlier Hub left pending on the host of backend, adopts the
// sessions it left running there for its workspaces that were running,
// reaps the rest there (SessionReaper), then starts the workspaces that
// were running and were not adopted. Their workspace locks are held while
// it settles, adopts and reaps, so no start races either.
func (h *Hub) resumeHost(backend string, ws []hub.Workspace, journals []hub.Journal) {
	defer h.watchers.Done()
	ctx, cancel := context.WithTimeout(h.bg, hostResumeTimeout)
	defer cancel()
	log := h.log.With(slog.String("backend", backend))
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
	}
	unlock, err := h.wsLocks.LockAll(ctx, ids)
	if err != nil {
		return
	}
	adopted := map[string]bool{}
	if pl, err := h.placeOf(ctx, backend); err != nil {
		log.LogAttrs(ctx, slog.LevelWarn, "a host's workspaces cannot be resumed", slog.Any("err", err))
		for _, j := range journals {
			h.settled(j.ID, false, fmt.Errorf("its host cannot be reached: %w", err))
		}
	} else {
		h.settleOnHost(ctx, pl, journals)
		if _, ok := pl.backend.(hub.SessionAdopter); ok {
			for _, w := range ws {
				if !w.AutoStart {
					continue
				}
				switch err := h.startLocked(ctx, w.ID, adoptOnly); {
				case err == nil:
					adopted[w.ID] = true
					log.LogAttrs(ctx, slog.LevelInfo, "adopted a session an earlier Hub left running", slog.String("workspace", w.ID))
				case hub.KindOf(err) != hub.NotFound:
					log.LogAttrs(ctx, slog.LevelWarn, "a session an earlier Hub left running could not be adopted",
						slog.String("workspace", w.ID), slog.Any("err", err))
				}
			}
		}
		if r, ok := pl.backend.(hub.SessionReaper); ok {
			if reaped, err := r.Reap(ctx); err != nil {
				log.LogAttrs(ctx, slog.LevelWarn, "what an earlier Hub left on a host could not be reaped", slog.Any("err", err))
			} else if len(reaped) > 0 {
				log.LogAttrs(ctx, slog.LevelInfo, "reaped sessions an earlier Hub left on a host", slog.Int("sessions", len(reaped)))
			}
		}
	}
	unlock()
	for _, w := range ws {
		if w.AutoStart && !adopted[w.ID] {
			if err := h.restart(ctx, w); err != nil {
				log.LogAttrs(ctx, slog.LevelWarn, "a host's workspace could not be recorded as stopped", slog.Any("err", err))
			}
		}
	}
}

// settleOnHost settles the folder and worktree journals pending on pl's
// host, once it answers: a folder journal settled no longer fences; one
// the host cannot settle is stranded (fencing changes) until a later
// start, as a journal Recover cannot settle is. A worktree journal left
// waits for a later start and fences nothing.
func (h *Hub) settleOnHost(ctx context.Context, pl place, journals []hub.Journal) {
	if len(journals) == 0 {
		return
	}
	if hp, ok := pl.backend.(hub.HostPlace); ok {
		if err := hp.Check(ctx); err != nil {
			for _, j := range journals {
				h.settled(j.ID, false, fmt.Errorf("its host does not answer: %w", err))
			}
			return
		}
	}
	for _, j := range journals {
		var unresolved string
		var err error
		switch j.Kind {
		case hub.JournalWorktreeCreate:
			err = h.recoverWorktreeCreate(ctx, j) // pending until registered, fencing nothing
		case hub.JournalWorktreeDelete:
			err = h.recoverWorktreeDelete(ctx, j)
		default:
			unresolved, err = h.settleFolder(ctx, pl, j)
		}
		switch {
		case err != nil:
			h.settled(j.ID, false, err)
		case unresolved != "":
			h.settled(j.ID, false, errors.New(unresolved))
		default:
			h.settled(j.ID, true, nil)
			h.counters.journalsRecovered.Add(1)
		}
	}
}
