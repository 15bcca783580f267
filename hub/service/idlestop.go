package service

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// Idle stop (Config.IdleStop): a running workspace session that stays idle
// for the whole period is stopped like any stop (stopLocked), so the Hub
// state and the activity topic report it as stopped and the workspace is
// not started again when the Hub restarts — as after a user's stop: it was
// stopped because nobody used it, and a restart would only run it idle
// for another period.
//
// A session is idle while all of these hold:
//   - no live stream is open on its workspace (whatever the stream
//     subscribes to: every topic a stream names is of its workspace, and
//     the dashboard keeps one open on the workspace a person looks at);
//   - the Hub's last observation of its activity says it runs and is quiet:
//     no agent turn or background work, nothing awaiting an answer. A
//     session that does not answer its activity feed is not known to be
//     quiet, so it is not idle: the Hub never stops what it cannot see;
//   - no use of a credential by it is held for its owner's approval (the
//     use would fail with the session).
//
// The period starts over whenever the session becomes idle and whenever
// a person acts on the workspace through the Hub: a request forwarded to
// the session under /s/{id}/ (BeginForward: the session is busy while
// the request is forwarded, however long that takes), a change of the person's
// state in it or an acknowledgement of its activity, or a start of the
// workspace that finds it running. Push deliveries do not count: they are the Hub's, journaled
// and sent whether or not the session runs, and what they announce as
// awaiting an answer is awaiting in the session's activity already.
//
// One timer per idle session, on the Hub's clock, armed when it becomes
// idle and stopped when it becomes busy; no sweep. The timer only
// proposes: the stop re-checks, under the workspace's lock, that the same
// session still runs and has been idle the whole period, so a session
// that became busy, was touched, or was stopped and started again while
// the timer fired is left alone.

// MinIdleStop is the shortest idle period Config.IdleStop takes: a
// shorter one would stop a session between a person's two looks at it.
const MinIdleStop = time.Minute

// idleStopper keeps what idle stop needs to know of every workspace. Its
// methods are safe for concurrent use; those that tell it of a change
// (started to touch) return at once, for the live broker calls them with
// its locks held and the commit path with commitMu held.
type idleStopper struct {
	h      *Hub
	period time.Duration // 0: off
	// ctx ends with close, cancelling a stop waiting for its workspace.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	watches  map[string]*idleWatch // by workspace id, one per running session
	streams  map[string]int        // live streams open, by workspace id
	held     map[string]int        // credential uses held for approval, by workspace id
	forwards map[string]int        // requests being forwarded to the session, by workspace id
	closed   bool
	stopping sync.WaitGroup // timers that fired and may stop a session
}

// idleWatch is idle stop's view of one running session. Guarded by
// idleStopper.mu.
type idleWatch struct {
	rw       *runningWorkspace
	observed hub.Observation // the Hub's last observation of its activity
	idle     bool            // idle since since
	since    time.Time
	timer    hub.Timer // armed while idle
}

func newIdleStopper(h *Hub, period time.Duration) *idleStopper {
	s := &idleStopper{h: h, period: period, watches: map[string]*idleWatch{},
		streams: map[string]int{}, held: map[string]int{}, forwards: map[string]int{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// started begins watching rw, workspace ws's session that started: it
// runs, nothing known of its activity yet, and its period starts now if
// nobody follows it.
func (s *idleStopper) started(ws string, rw *runningWorkspace) {
	if s.period <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.watches[ws]; old != nil {
		s.disarmLocked(old)
	}
	w := &idleWatch{rw: rw, observed: hub.Observation{Running: true}}
	s.watches[ws] = w
	s.updateLocked(ws, w)
}

// ended stops watching rw, which ended; a newer session's watch is left
// alone.
func (s *idleStopper) ended(ws string, rw *runningWorkspace) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.watches[ws]; w != nil && w.rw == rw {
		s.disarmLocked(w)
		delete(s.watches, ws)
	}
}

// observed records the Hub's observation o of ws's session rs (the live
// broker's Observed hook). An observation of a session that is no longer
// the workspace's is dropped.
func (s *idleStopper) observed(ws string, rs hub.WorkspaceSession, o hub.Observation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.watches[ws]; w != nil && w.rw.rs == rs {
		w.observed = o
		s.updateLocked(ws, w)
	}
}

// streamChanged counts a live stream on ws that opened or ended (the
// live broker's Presence hook). Streams are counted whether or not ws
// runs: one opened before a start keeps the new session.
func (s *idleStopper) streamChanged(ws string, open bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count(s.streams, ws, open)
}

// holding counts a use of a credential by ws's session held for approval
// (on true) and its end (on false).
func (s *idleStopper) holding(ws string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count(s.held, ws, on)
}

// forwarding counts a request being forwarded to ws's session (on true)
// and its end (on false); when the last ends, the period starts over.
func (s *idleStopper) forwarding(ws string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count(s.forwards, ws, on)
}

// count moves m[ws] by one and updates ws's watch. s.mu is held.
func (s *idleStopper) count(m map[string]int, ws string, up bool) {
	if up {
		m[ws]++
	} else if m[ws]--; m[ws] <= 0 {
		delete(m, ws)
	}
	if w := s.watches[ws]; w != nil {
		s.updateLocked(ws, w)
	}
}

// touch starts ws's period over: a person acted on the workspace through
// the Hub.
func (s *idleStopper) touch(ws string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.watches[ws]; w != nil && w.idle {
		s.disarmLocked(w)
		s.armLocked(ws, w)
	}
}

// idleLocked reports whether w, ws's watch, is idle now. s.mu is held.
func (s *idleStopper) idleLocked(ws string, w *idleWatch) bool {
	return s.streams[ws] == 0 && s.held[ws] == 0 && s.forwards[ws] == 0 && w.observed.Running && w.observed.Quiet()
}

// updateLocked arms w's timer when ws has just become idle and stops it
// when ws has just become busy; a change that keeps it idle (or busy)
// leaves the period running. s.mu is held.
func (s *idleStopper) updateLocked(ws string, w *idleWatch) {
	switch idle := s.idleLocked(ws, w); {
	case idle && !w.idle:
		s.armLocked(ws, w)
	case !idle && w.idle:
		s.disarmLocked(w)
	}
}

// armLocked starts w's period now. s.mu is held.
func (s *idleStopper) armLocked(ws string, w *idleWatch) {
	w.idle, w.since = true, s.h.clock.Now()
	if s.closed {
		return
	}
	w.timer = s.h.clock.AfterFunc(s.period, func() { s.fire(ws, w) })
}

// disarmLocked ends w's period. A timer that has fired already finds w
// no longer idle, or idle since later, and does nothing. s.mu is held.
func (s *idleStopper) disarmLocked(w *idleWatch) {
	w.idle = false
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}

// due reports whether w, ws's watch, is still ws's, idle, and has been
// for the whole period at now.
func (s *idleStopper) due(ws string, w *idleWatch, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closed && s.watches[ws] == w && w.idle && !now.Before(w.since.Add(s.period))
}

// fire is w's timer: it stops ws's session if, under the workspace's
// lock, it is still the same session and still due. The stop runs on the
// timer's goroutine; close waits for it.
func (s *idleStopper) fire(ws string, w *idleWatch) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.stopping.Add(1)
	s.mu.Unlock()
	defer s.stopping.Done()
	if !s.due(ws, w, s.h.clock.Now()) {
		return // busy, touched or ended meanwhile: whatever did it re-armed what is needed
	}
	h := s.h
	unlock, err := h.wsLocks.Lock(s.ctx, ws)
	if err != nil {
		return // the Hub is closing
	}
	defer unlock()
	// Checked again under the lock: a start, stop, stream or turn that
	// came first wins.
	if !s.due(ws, w, h.clock.Now()) || h.workspaceSession(ws) != w.rw {
		return
	}
	ctx := context.Background()
	if _, err := h.stopLocked(ctx, ws); err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "an idle workspace session could not be stopped; trying again after another idle period",
			slog.String("workspace", ws), slog.Duration("idle", s.period), slog.Any("err", err))
		s.mu.Lock()
		if s.watches[ws] == w && w.idle {
			s.disarmLocked(w)
			s.armLocked(ws, w)
		}
		s.mu.Unlock()
		return
	}
	h.log.LogAttrs(ctx, slog.LevelInfo, "stopped an idle workspace session",
		slog.String("workspace", ws), slog.Duration("idle", s.period))
}

// close stops every timer, refuses new ones and waits for the stops under
// way; the Hub's own Close stops what still runs, keeping it marked to
// start again.
func (s *idleStopper) close() {
	s.mu.Lock()
	s.closed = true
	for _, w := range s.watches {
		if w.timer != nil {
			w.timer.Stop()
			w.timer = nil
		}
	}
	s.mu.Unlock()
	s.cancel()
	s.stopping.Wait()
}
