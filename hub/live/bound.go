package live

import "time"

// This file is a live stream's bound. A stream tells a client that stopped
// reading from one that reads a big frame by time, not by size. The
// contract:
//
//   - Every envelope is queued, whatever its size: a frame is never the
//     reason its own stream ends.
//   - What a stream holds is the bytes of the envelopes its writer has not
//     taken yet, less the largest of them: one frame of any size, and the
//     small ones around it, never count against a client that reads (a
//     batch the writer is writing is not counted either, nor are document
//     snapshots, which replace each other).
//   - A stream holding more than MaxBacklog is behind, and ended once
//     its writer has had envelopes to write for StallTimeout without
//     making progress. Progress is the writer taking a batch, finishing
//     one, or reporting bytes written (Progress), all timed on the Hub's
//     Clock; a transport reports it as it writes a large batch piece by
//     piece.
//   - A stream holding more than MaxHeld is ended however it
//     progresses: a client that reads, but slower than its workspaces
//     produce, must not make the Hub hold without bound.
//
// To its client an ended stream is a transport failure: it reconnects with
// its cursors (replay or `resync`). These rules keep that to clients that
// stopped reading and to those that read slower than their workspaces
// produce, never to a client reading a frame of whatever size.
const (
	// MaxBacklog is what a stream may hold (see above) before its
	// writer's progress is watched.
	MaxBacklog = 1 << 20
	// StallTimeout is how long a stream past MaxBacklog may go
	// without progress before it is ended.
	StallTimeout = 10 * time.Second
	// MaxHeld is what a stream may hold before it is ended at once.
	MaxHeld = 64 << 20
)

// wrote records that the writer finished a batch.
func (s *Stream) wrote() {
	s.mu.Lock()
	s.writing = false
	s.progressed = s.b.clock.Now()
	s.mu.Unlock()
}

// Progress records that the writer made progress on the batch it is
// writing: a transport calls it each time a piece of a large batch is
// written, so a client reading a big frame is not taken for a stalled one
// (see MaxBacklog).
func (s *Stream) Progress() {
	now := s.b.clock.Now()
	s.mu.Lock()
	s.progressed = now
	s.mu.Unlock()
}

// holdsLocked is what the stream holds (see MaxBacklog). s.mu is held.
func (s *Stream) holdsLocked() int { return s.backlog - s.largest }

// recountLocked recomputes backlog and largest after envelopes left the
// queue otherwise than by the writer taking them all. s.mu is held.
func (s *Stream) recountLocked() {
	s.backlog, s.largest = 0, 0
	for _, q := range s.queue {
		if !q.env.coalesce {
			n := q.env.size()
			s.backlog += n
			s.largest = max(s.largest, n)
		}
	}
}

// judgeLocked applies the stream's bounds (see MaxBacklog): false
// when the stream must end. A stream that is behind but progressing gets
// a timer that judges it again when its time would be up. s.mu is held.
func (s *Stream) judgeLocked() bool {
	holds := s.holdsLocked()
	switch {
	case holds > MaxHeld:
		return false
	case holds <= MaxBacklog:
		return true
	}
	wait := StallTimeout - s.b.clock.Now().Sub(s.progressed)
	if wait <= 0 {
		return false
	}
	if s.stall == nil {
		s.stall = s.b.clock.AfterFunc(wait, s.stallCheck)
	}
	return true
}

// stallCheck is the stall timer's: it ends a stream still behind with no
// progress for StallTimeout, and re-arms itself for one that
// progressed meanwhile.
func (s *Stream) stallCheck() {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.stall = nil
	ok := s.judgeLocked()
	s.mu.Unlock()
	if !ok {
		s.end()
	}
}
