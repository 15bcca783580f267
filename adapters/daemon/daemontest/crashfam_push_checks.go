package daemontest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The push family's checks (PushFamily states them): what each daemon
// left in its journal against what the push service received, after
// every kill and stop (stopped), and what was still to be sent at the
// run's end (settle).

// pushJournalRow is one delivery of the journal the census copy holds.
type pushJournalRow struct {
	ws, device, notification, state string
	deadline, settled               sql.NullInt64 // Unix nanoseconds
}

// readPushJournal reads the deliveries to pw's devices.
func readPushJournal(ctx context.Context, db *sql.DB, pw *pushWriter) ([]pushJournalRow, error) {
	rows, err := db.QueryContext(ctx, "SELECT workspace_id, device_id, notification_id, state, deadline, settled_at FROM push_deliveries")
	if err != nil {
		return nil, fmt.Errorf("push journal: %w", err)
	}
	defer rows.Close()
	var out []pushJournalRow
	for rows.Next() {
		var r pushJournalRow
		if err := rows.Scan(&r.ws, &r.device, &r.notification, &r.state, &r.deadline, &r.settled); err != nil {
			return nil, fmt.Errorf("push journal: %w", err)
		}
		if _, mine := pw.subs[r.device]; mine {
			out = append(out, r)
		}
	}
	return out, rows.Err()
}

// stopped checks what a daemon that ended left journaled against what
// the service has received so far.
func (f *pushFamily) stopped(ctx context.Context, w *Writer, db *sql.DB) error {
	pw := f.writer(w)
	rows, err := readPushJournal(ctx, db, pw)
	if err != nil {
		return err
	}
	copies, err := f.received(pw)
	if err != nil {
		return err
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	journaled := map[string]bool{}
	for _, r := range rows {
		id := pushPayloadID(r.ws, r.device, r.notification)
		journaled[id] = true
		tr := pw.track[id]
		if tr == nil {
			tr = &pushTrack{}
			pw.track[id] = tr
		}
		switch r.state {
		case "sent":
			if copies[id] == 0 {
				fail("delivery %.12s is journaled as sent, but the push service never received it", id)
			}
			if !tr.sent {
				tr.sent, tr.copiesAtSent = true, copies[id]
			}
		case "pending", "held":
			tr.unsent++
		case "discarded":
			if !r.settled.Valid || !r.deadline.Valid || r.settled.Int64 < r.deadline.Int64 {
				fail("delivery %.12s was discarded unsent before its send window ended, with nothing to discard it", id)
			} else if !tr.expired {
				tr.expired = true
				w.Note("deliveries whose send window ran out before a daemon lived to send them")
			}
		default:
			fail("delivery %.12s is in state %q", id, r.state)
		}
		allowed := tr.unsent // one copy per daemon that ended with it unsent
		if tr.sent {
			allowed++ // and the one whose answer was journaled
		}
		switch {
		case tr.sent && copies[id] > tr.copiesAtSent:
			fail("delivery %.12s was received %d times, again after it was journaled as sent", id, copies[id])
		case copies[id] > allowed:
			fail("delivery %.12s was received %d times, more than the daemons that sent it (%d)", id, copies[id], allowed)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(pw.track)) {
		if !journaled[id] {
			fail("delivery %.12s left the journal", id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(copies)) {
		if !journaled[id] {
			fail("a push with payload id %.12s was received, but no delivery of the journal has it", id)
		}
	}
	return errors.Join(errs...)
}

// settle waits until every delivery a census found journaled, and whose
// window did not run out, has reached the push service: the last daemon
// holds them through its first 30 s.
func (f *pushFamily) settle(ctx context.Context, w *Writer) error {
	pw := f.writer(w)
	ctx, cancel := context.WithTimeout(ctx, f.settleWait)
	defer cancel()
	start := time.Now()
	for {
		all := f.svc.Messages()
		copies, err := f.received(pw)
		if err != nil {
			return err
		}
		var missing []string
		for _, id := range slices.Sorted(maps.Keys(pw.track)) {
			if tr := pw.track[id]; !tr.expired && copies[id] == 0 {
				missing = append(missing, id[:12])
			}
		}
		if len(missing) == 0 {
			f.note(w, pw, copies)
			return f.refusals(w)
		}
		if _, err := f.svc.Wait(ctx, len(all)+1); err != nil {
			return errors.Join(fmt.Errorf("%d journaled deliveries never reached the push service within %v: %s",
				len(missing), time.Since(start).Round(time.Second), strings.Join(missing[:min(len(missing), 10)], ", ")), f.refusals(w))
		}
	}
}

// note counts, once every delivery has arrived, the deliveries a daemon
// left unsent that a later one sent, and the sends repeated after a kill
// cut their answer off.
func (f *pushFamily) note(w *Writer, pw *pushWriter, copies map[string]int) {
	for id, tr := range pw.track {
		if tr.unsent > 0 && copies[id] > 0 {
			w.Note("deliveries a daemon left journaled unsent that a later one sent")
		}
		for range copies[id] - 1 {
			w.Note("sends repeated, with the same payload id, after a kill cut their answer off")
		}
	}
}

// refusals reports every push the service refused, through the first
// writer (the service is the family's).
func (f *pushFamily) refusals(w *Writer) error {
	if w.Index != 0 {
		return nil
	}
	var errs []error
	for _, r := range f.svc.Failures() {
		errs = append(errs, fmt.Errorf("the push service refused a push with %d: %s", r.Status, r.Reason))
	}
	return errors.Join(errs...)
}
