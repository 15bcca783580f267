package daemontest

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
)

// Model is what a crash writer expects of its resources, or what it
// observed of them: one fact per key, for instance "folder f3" → "" or
// "workspace w3" → "path=b1/w3 name=Docs". Two models agree when they hold
// the same keys with the same values.
type Model map[string]string

// Keys returns the model's keys that start with prefix, sorted, so that a
// writer's random choices depend only on its seed and its model.
func (m Model) Keys(prefix string) []string {
	var keys []string
	for k := range m {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// diff returns want's facts that got lacks or holds otherwise (lost) and
// got's facts that want lacks (unexpected), each sorted and described.
func diff(want, got Model) (lost, unexpected []string) {
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if v, ok := got[k]; !ok {
			lost = append(lost, fmt.Sprintf("%s [%s] is missing", k, want[k]))
		} else if v != want[k] {
			lost = append(lost, fmt.Sprintf("%s is [%s], want [%s]", k, v, want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			unexpected = append(unexpected, fmt.Sprintf("%s [%s] is unexpected", k, got[k]))
		}
	}
	return lost, unexpected
}

// Op is one mutation a crash writer sends: a request, and how it changes
// the writer's model once acknowledged, or if it landed unseen.
type Op struct {
	// Name is the operation, counted in the figures as "<family>/<Name>".
	Name string
	// Method, Path (relative to the daemon's URL, no leading slash) and
	// Body (sent as JSON when not nil) are the request.
	Method, Path string
	Body         any
	// Acked applies a 2xx answer to m. It returns an error when the
	// answer contradicts the model (the rename of a folder naming other
	// workspaces than the ones inside it); the driver reports it.
	Acked func(m Model, answer []byte) error
	// Landed applies the op to m as if it had landed while its answer was
	// lost to a kill; obs is what the restarted daemon holds, from which it
	// reads what the daemon chose (a new workspace's id) or which partial
	// outcome the contract allows (a folder created, its registration
	// not). nil: the op cannot land unseen in a way the model would see.
	Landed func(m, obs Model)
}

// Family is one kind of mutation the crash load drives, through as many
// writers as CrashConfig.Writers says, each on resources of its own.
type Family struct {
	// Name labels the family's writes in the figures ("folders").
	Name string
	// Backend is where the family's folders are: "" for the Hub's
	// machine, "ssh:<host>" for a configured host (its root is then a
	// path there). Families that know no other machine ignore it.
	Backend string
	// Setup prepares a writer before the kills begin (its workspaces, say)
	// and records in w.Model what it acknowledged. nil: nothing to prepare.
	Setup func(ctx context.Context, w *Writer) error
	// Next returns the writer's next mutation, chosen with w.Rand from
	// w.Model. It may prepare the disk first (a folder to register) and
	// record that in w.Model.
	Next func(w *Writer) (Op, error)
	// Observe returns what the daemon now holds of the writer's resources,
	// in the model's terms. st is GET /api/hub/state, read once for all
	// writers after a restart.
	Observe func(ctx context.Context, w *Writer, st HubState) (Model, error)

	// The hooks of a family whose writes have consequences in time,
	// outside the Hub (crashhooks.go); nil: none.
	//
	// Prepare runs once, before the first daemon starts: it readies what
	// the writes need beside the Hub (a fake push service) in dir, a
	// directory of its own, and returns the `wharf serve` flags that point
	// every daemon of the run at it, and release, which the run calls at
	// its end.
	Prepare func(ctx context.Context, dir string) (args []string, release func(), err error)
	// Stopped reads what a daemon that ended (killed, or stopped
	// gracefully) left in its database: db is a private copy, the one the
	// journal census reads (crashjournals.go). Every error it returns,
	// each of an errors.Join apart, is a problem.
	Stopped func(ctx context.Context, w *Writer, db *sql.DB) error
	// Settle runs once after the last restart, before the last stop: it
	// waits, within its own bound, for what the writer's writes are still
	// to cause and checks it. Every error is a problem, as for Stopped.
	Settle func(ctx context.Context, w *Writer) error
}

// Writer is one goroutine's share of a family's load: its private
// directory, its random source, its model and its client. The driver never
// runs two of its methods at once.
type Writer struct {
	Family *Family
	// Index numbers the writers of one family from 0.
	Index int
	// Root is a directory only this writer uses (a canonical path).
	Root string
	// Rand is the writer's own source, derived from the run's seed.
	Rand *rand.Rand
	// Model is everything acknowledged so far.
	Model Model
	// Client reaches the daemon that runs now, as the run's device session.
	Client *Client

	seq     int
	pending *Op    // the request a kill cut, until the next verification
	notes   *notes // the run's, for Note
}

// notes counts what the families noted, for Figures.Notes.
type notes struct {
	mu sync.Mutex
	n  map[string]int
}

// Note counts one occurrence of what, an outcome the family's contract
// allows but a reader of the figures should see ("trees registered
// before their checkout ran"); Figures.Notes reports it under the
// family's name. Call it from Next, Acked or Observe, never from
// Landed, which the driver also runs on a hypothesis.
func (w *Writer) Note(what string) {
	if w.notes == nil {
		return
	}
	w.notes.mu.Lock()
	defer w.notes.mu.Unlock()
	w.notes.n[w.Family.Name+": "+what]++
}

// NewName returns prefix followed by a number this writer never returned
// before: a fresh folder or display name.
func (w *Writer) NewName(prefix string) string {
	w.seq++
	return fmt.Sprintf("%s%d", prefix, w.seq)
}

// Call sends a request that must succeed (for Setup and Observe) and
// decodes its answer into out when out is not nil.
func (w *Writer) Call(ctx context.Context, method, path string, in, out any) error {
	status, body, err := w.Client.Do(ctx, method, path, in, out)
	if err != nil {
		return err
	}
	if status/100 != 2 {
		return fmt.Errorf("%s /%s: %d %s", method, path, status, body)
	}
	return nil
}

// outcome is what became of one step's request.
type outcome int

const (
	outcomeAcked   outcome = iota // a 2xx answer
	outcomeRefused                // another answer
	outcomeCut                    // no answer: the connection failed
)

// stepResult is one step: the op's name and what became of it.
type stepResult struct {
	op      string
	outcome outcome
	detail  string // for a refusal, the status and body; for a cut, the error
	err     error  // an answer that contradicts the model, or a failed preparation
}

// step sends the writer's next op. A cut request is kept pending for the
// next verification, which decides whether it landed.
func (w *Writer) step(ctx context.Context) stepResult {
	op, err := w.Family.Next(w)
	if err != nil {
		return stepResult{op: "prepare", outcome: outcomeRefused, err: err}
	}
	res := stepResult{op: op.Name}
	status, body, err := w.Client.Do(ctx, op.Method, op.Path, op.Body, nil)
	switch {
	case err != nil:
		res.outcome, res.detail = outcomeCut, err.Error()
		w.pending = &op
	case status/100 == 2:
		res.outcome = outcomeAcked
		if op.Acked != nil {
			res.err = op.Acked(w.Model, body)
		}
	default:
		res.outcome, res.detail = outcomeRefused, fmt.Sprintf("%d %s", status, bytes.TrimSpace(body))
	}
	return res
}

// verdict is one writer's verification after a restart.
type verdict struct {
	lost, unexpected []string
	landed           bool   // the cut request had landed
	pending          string // the name of the op a kill cut, or ""
}

// verify compares what the daemon holds with the model. A request a kill
// cut may have landed or not: it is judged landed when the model with it
// applied explains the observation better (fewer discrepancies) than
// without, so a loss elsewhere is still reported alone. Either way the
// model becomes what was observed, so one loss is reported once and the
// load goes on.
func (w *Writer) verify(ctx context.Context, st HubState) (verdict, error) {
	obs, err := w.Family.Observe(ctx, w, st)
	if err != nil {
		return verdict{}, err
	}
	var v verdict
	v.lost, v.unexpected = diff(w.Model, obs)
	if w.pending != nil {
		v.pending = w.pending.Name
		if w.pending.Landed != nil && len(v.lost)+len(v.unexpected) > 0 {
			after := maps.Clone(w.Model)
			w.pending.Landed(after, obs)
			if lost, unexpected := diff(after, obs); len(lost)+len(unexpected) < len(v.lost)+len(v.unexpected) {
				v.lost, v.unexpected, v.landed = lost, unexpected, true
			}
		}
	}
	w.Model, w.pending = obs, nil
	return v, nil
}
