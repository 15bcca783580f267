package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// W9 targets (issue 3): absolute, unlike W1's ratios.
const (
	w9Clients   = 4
	w9MaxP99    = 5 * time.Millisecond
	w9MinPerSec = 500.0
)

// w9Round is one round of W9: the raw SQLite baseline, the HTTP write
// probe and Wharf, run one after the other.
type w9Round struct {
	Raw, Probe, Wharf runResult
}

// disturbance is the largest share of the machine other processes took
// during the round's runs (0 when unknown).
func (r w9Round) disturbance() float64 {
	return pairRow{Probe: r.Raw, W1: r.Probe, W2: r.Wharf}.disturbance()
}

// w9Result is W9 with its oracle.
type w9Result struct {
	Rounds []w9Round
	// NamesKept: after the runs, each client's workspace carries the last
	// name that client sent (so the writes landed, in order).
	NamesKept bool
	NamesNote string
	FSType    string  // file system of the temp dirs holding both databases
	Diag      *w9Diag // nil under -no-diagnosis
}

// w9Names is the name worker w sends in its n-th request: two names in
// turn, neither of them the folder's default, so every request changes
// the stored name and the Hub really writes.
func w9Names(w, n int) string {
	return fmt.Sprintf("bench client %d %c", w+1, "ab"[n%2])
}

// displayNameTarget is W9 against base: worker w renames ids[w]. last[w]
// records the last name worker w sent (each worker writes only its slot).
func displayNameTarget(base string, header http.Header, ids []string, last []string) target {
	return target{request: func(ctx context.Context, w, n int) (*http.Request, error) {
		name := w9Names(w, n)
		body, _ := json.Marshal(map[string]string{"displayName": name})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost,
			base+"/api/hub/workspaces/"+ids[w]+"/display-name", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header = header
		if last != nil {
			last[w] = name
		}
		return req, nil
	}}
}

// rawDB is the baseline database: a fresh file opened with adapters/sqlite's
// settings (WAL, synchronous=FULL, busy_timeout, BEGIN IMMEDIATE, one
// writer connection) holding a workspaces table of the same shape.
type rawDB struct {
	dir string
	db  *sql.DB
}

func openRawDB(ids []string) (*rawDB, error) {
	dir, err := os.MkdirTemp("", "wharf-bench-raw-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "raw.db")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	r := &rawDB{dir: dir, db: db}
	if _, err := db.Exec(`CREATE TABLE workspaces (
		seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, path TEXT NOT NULL UNIQUE,
		display_name TEXT NOT NULL, auto_start INTEGER NOT NULL) STRICT`); err != nil {
		r.close()
		return nil, err
	}
	for _, id := range ids {
		if _, err := db.Exec(`INSERT INTO workspaces (id, path, display_name, auto_start) VALUES (?, ?, ?, 0)`,
			id, "/nowhere/"+id, id); err != nil {
			r.close()
			return nil, err
		}
	}
	return r, nil
}

func (r *rawDB) close() {
	r.db.Close()
	os.RemoveAll(r.dir)
}

// rename runs the write Wharf's display-name change commits: one BEGIN
// IMMEDIATE transaction around the UPDATE statement adapters/sqlite uses.
func (r *rawDB) rename(ctx context.Context, id, name string) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `UPDATE workspaces SET path = ?, display_name = ?, auto_start = ? WHERE id = ?`,
		"/nowhere/"+id, name, false, id)
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n != 1 {
			err = fmt.Errorf("rename %s: %d rows", id, n)
		}
	}
	if err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// rawTarget drives rename in-process from the loop's workers.
func (r *rawDB) target(ids []string) target {
	return target{call: func(ctx context.Context, w, n int) (int, error) {
		if err := r.rename(ctx, ids[w], w9Names(w, n)); err != nil {
			return 0, err
		}
		return http.StatusOK, nil
	}}
}

// probeHandler is the HTTP write probe: the display-name route answered by
// a minimal handler that decodes the body, commits the raw write and
// answers a small JSON object. No authentication, no Hub.
func (r *rawDB) probeHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/hub/workspaces/{id}/display-name", func(w http.ResponseWriter, req *http.Request) {
		var body struct {
			DisplayName string `json:"displayName"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, req.Body, 1<<16)).Decode(&body); err != nil {
			http.Error(w, `{"error":"bad body"}`, http.StatusBadRequest)
			return
		}
		id := req.PathValue("id")
		if err := r.rename(req.Context(), id, body.DisplayName); err != nil {
			http.Error(w, `{"error":"write failed"}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"workspace": map[string]string{"id": id, "displayName": body.DisplayName}})
	})
	return mux
}

// runW9 measures W9 in rounds on w, whose workspaces ids[:w9Clients] it
// renames; the baselines use a raw database in their own temp dir.
func runW9(ctx context.Context, cfg config, w *wharf, sessionID string, ids []string, progress func(string, ...any)) (*w9Result, error) {
	if len(ids) < w9Clients {
		return nil, fmt.Errorf("W9 needs %d workspaces, have %d", w9Clients, len(ids))
	}
	ids = ids[:w9Clients]
	raw, err := openRawDB(ids)
	if err != nil {
		return nil, fmt.Errorf("W9 raw database: %w", err)
	}
	defer raw.close()
	probe, err := startServer(raw.probeHandler())
	if err != nil {
		return nil, err
	}
	defer probe.close()
	res := &w9Result{FSType: fsType(raw.dir)}
	last := make([]string, w9Clients)
	wt := displayNameTarget(w.base, bearer(sessionID), ids, last)
	pt := displayNameTarget(probe.base, http.Header{}, ids, nil)
	for round := 1; round <= cfg.rounds; round++ {
		progress("W9 round %d/%d: raw SQLite, HTTP write probe, Wharf at %d clients", round, cfg.rounds, w9Clients)
		var r w9Round
		r.Raw = closedLoop(ctx, raw.target(ids), w9Clients, cfg.warmup, cfg.duration, cfg.maxPerWorker, nil, nil)
		r.Probe = closedLoop(ctx, pt, w9Clients, cfg.warmup, cfg.duration, cfg.maxPerWorker, probe.accepted, nil)
		r.Wharf = closedLoop(ctx, wt, w9Clients, cfg.warmup, cfg.duration, cfg.maxPerWorker, w.accepted, nil)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res.Rounds = append(res.Rounds, r)
	}
	names, err := w.displayNames(ctx, sessionID)
	if err != nil {
		return nil, fmt.Errorf("W9 oracle: %w", err)
	}
	res.NamesKept = true
	for i, id := range ids {
		if names[id] != last[i] {
			res.NamesKept = false
			res.NamesNote = fmt.Sprintf("%s is %q, its client last sent %q", id, names[id], last[i])
		}
	}
	if !cfg.skipDiagnosis {
		progress("W9 diagnosis: raw SQLite and Wharf paced at %.0f/s; hub.SetDisplayName in-process", w9MinPerSec)
		d := diagnoseW9(ctx, cfg, w, sessionID, ids, raw)
		res.Diag = &d
	}
	return res, ctx.Err()
}

// displayNames reads every workspace's display name from Hub state.
func (w *wharf) displayNames(ctx context.Context, sessionID string) (map[string]string, error) {
	status, body, err := get(ctx, http.MethodGet, w.base+"/api/hub/state", bearer(sessionID))
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("state: status %d", status)
	}
	var st struct {
		Workspaces []struct {
			ID          string `json:"id"`
			DisplayName string `json:"displayName"`
		} `json:"workspaces"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, ws := range st.Workspaces {
		out[ws.ID] = ws.DisplayName
	}
	return out, nil
}
