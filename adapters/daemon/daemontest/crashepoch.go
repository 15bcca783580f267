package daemontest

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// maxRefusals stops a writer after this many refusals in a row in one
// epoch: something fences it (a pending journal), and a writer that
// cannot write must not keep the kill from coming.
const maxRefusals = 3

// epoch lets every writer step until the kill: it comes after uptime
// (drawn by the caller), but not before every writer has had a write
// acknowledged in this epoch (or has stopped), so that every family
// writes in every epoch however slow the machine: a run acknowledges at
// least Kills writes per writer, which a test can assert.
// It kills the daemon while the writers' requests are in flight, then
// returns once every writer has returned. The killing channel is closed
// before the kill, so a writer tells a request cut by the kill (killing
// closed) from one the daemon failed by itself; each writer stops at its
// first cut request, so it has at most one for the next verification to
// judge. The time is the kill point's randomness, never a wait for an
// event: what the run asserts does not depend on it.
func (r *crashRun) epoch(ctx context.Context, uptime time.Duration) (acked, cut int, killErr error) {
	killing := make(chan struct{})
	allSettled := make(chan struct{}) // every writer has a write acknowledged, or has stopped
	var (
		mu      sync.Mutex // guards r.fig, acked, cut and settled
		wg      sync.WaitGroup
		settled int
	)
	settle := func() { // with mu held
		if settled++; settled == len(r.writers) {
			close(allSettled)
		}
	}
	for _, w := range r.writers {
		wg.Go(func() {
			who := fmt.Sprintf("%s-%d", w.Family.Name, w.Index)
			refusals, ackedHere := 0, false
			defer func() {
				mu.Lock()
				defer mu.Unlock()
				if !ackedHere {
					settle()
				}
			}()
			for !isClosed(killing) && ctx.Err() == nil {
				reqCtx, cancel := context.WithTimeout(ctx, r.cfg.RequestTimeout)
				res := w.step(reqCtx)
				cancel()
				killed := isClosed(killing)
				name := w.Family.Name + "/" + res.op
				mu.Lock()
				stop := false
				switch res.outcome {
				case outcomeAcked:
					r.fig.Acked[name]++
					refusals = 0
					acked++
					if !ackedHere {
						ackedHere = true
						settle()
					}
				case outcomeCut:
					cut++
					r.fig.Cut++
					if !killed && ctx.Err() == nil {
						r.fig.problem("%s: %s got no answer while the daemon ran: %s", who, name, res.detail)
					}
					stop = true
				case outcomeRefused:
					if res.err == nil { // else the writer failed before sending
						r.fig.Refused++
						r.fig.problem("%s: %s refused: %s", who, name, res.detail)
					}
					refusals++
					stop = refusals >= maxRefusals
				}
				if res.err != nil {
					r.fig.problem("%s: %s: %v", who, name, res.err)
				}
				mu.Unlock()
				if stop {
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	timer := time.NewTimer(uptime)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-done:
	case <-ctx.Done():
	}
	select {
	case <-allSettled:
	case <-ctx.Done():
	}
	close(killing)
	killErr = r.d.Kill()
	<-done
	return acked, cut, killErr
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
