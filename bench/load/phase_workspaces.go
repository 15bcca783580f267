package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"
)

// The 50-workspace state (anchors.md §2.4's W1 with 50 workspaces, issue 3).
const (
	stateWorkspaces = 50
	stateRunning    = 10
)

// state50Result is W1 repeated against a Wharf with stateWorkspaces
// registered workspaces, stateRunning of them running real children.
type state50Result struct {
	Rows      []concRow
	Body      []byte    // Wharf's answer, captured once before the runs; the probe serves it
	Running   int       // workspaces the captured answer lists as running
	SameAtEnd bool      // Wharf's answer after the runs is byte for byte the captured one
	EndNote   string    // what differed, when it did
	Diag      []sqlDiag // the parts of hub.State timed in-process; nil under -no-diagnosis
}

// runWorkspaceHub builds the workspace child, starts a second Wharf whose
// local backend runs it, registers the workspaces the selected workloads
// need, and runs W11, W9 and the 50-workspace state in that order: W11
// first, while no other child runs, so its process and descriptor counts
// see only its own. The Wharf, its children and every temp dir are gone
// when it returns.
func runWorkspaceHub(ctx context.Context, cfg config, rep *report, progress func(string, ...any)) error {
	tmp, err := os.MkdirTemp("", "wharf-bench-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	progress("building ./cmd/wharf for the workspace sessions")
	bin, err := buildChild(ctx, tmp)
	if err != nil {
		return err
	}
	progress("starting a second Wharf whose sessions run %s", bin)
	w, err := startWharf(ctx, []string{bin}, 0)
	if err != nil {
		return fmt.Errorf("start wharf: %w", err)
	}
	defer w.close() // stops every session still running and reaps it
	sessionID, _, err := w.login(ctx, "bench workspaces")
	if err != nil {
		return err
	}
	n := 1 + w9Clients
	if cfg.has("state50") {
		n = stateWorkspaces
	}
	progress("registering %d workspaces (git init through the Hub)", n)
	fl, err := registerFleet(ctx, w, sessionID, n)
	defer fl.remove()
	if err != nil {
		return err
	}
	rep.WSFSType = fsType(fl.parent)

	if cfg.has("w11") {
		progress("W11: 1 warm-up and %d start/stop cycles of %s", cfg.w11Cycles, fl.ids[0])
		r := runW11(ctx, w, sessionID, fl.ids[0], bin, cfg.w11Cycles)
		rep.W11 = &r
	}
	if cfg.has("w9") {
		if rep.W9, err = runW9(ctx, cfg, w, sessionID, fl.ids[1:], progress); err != nil {
			return err
		}
	}
	if cfg.has("state50") {
		if rep.State50, err = runState50(ctx, cfg, w, sessionID, fl, progress); err != nil {
			return err
		}
	}
	if !cfg.skipDiagnosis && cfg.hasAny("w9", "state50") {
		if rep.WhatIf, err = diagnoseLongTTL(ctx, cfg, bin, fl, progress); err != nil {
			return fmt.Errorf("what-if diagnosis: %w", err)
		}
	}
	return ctx.Err()
}

// runState50 starts stateRunning sessions, captures Wharf's state answer
// once for the probe, runs the probe/W1 rounds, checks the answer did not
// change meanwhile, and stops the sessions.
func runState50(ctx context.Context, cfg config, w *wharf, sessionID string, fl *fleet, progress func(string, ...any)) (*state50Result, error) {
	progress("state50: starting %d of the %d workspaces", stateRunning, len(fl.ids))
	stop, err := w.startAll(ctx, sessionID, fl.ids[:stateRunning], progress)
	defer stop()
	if err != nil {
		return nil, fmt.Errorf("state50: %w", err)
	}
	res := &state50Result{}
	var rows []concRow
	res.Body, res.Running, rows, err = stateRounds(ctx, cfg, w, sessionID, len(fl.ids), "state50: probe, W1", progress)
	res.Rows = rows
	if err != nil {
		return nil, err
	}
	status, end, err := get(ctx, http.MethodGet, w.base+"/api/hub/state", bearer(sessionID))
	switch {
	case err != nil || status != http.StatusOK:
		res.EndNote = fmt.Sprintf("the last state request failed: status %d, %v", status, err)
	case !bytes.Equal(end, res.Body):
		res.EndNote = fmt.Sprintf("the answer changed during the runs (%d B, was %d B)", len(end), len(res.Body))
	default:
		res.SameAtEnd = true
	}
	if !cfg.skipDiagnosis {
		progress("state50 diagnosis: hub.State and its parts in-process")
		if res.Diag, err = diagnoseState50(ctx, w, sessionID, fl.paths); err != nil {
			return nil, fmt.Errorf("state50 diagnosis: %w", err)
		}
	}
	return res, nil
}

// startAll starts the sessions of ids over HTTP. stop, never nil, stops
// those that started (checking each answer) and is to be called even when
// err is not nil.
func (w *wharf) startAll(ctx context.Context, sessionID string, ids []string, progress func(string, ...any)) (stop func(), err error) {
	client := newClient()
	client.Timeout = 30 * time.Second // a start may take the backend's ReadyTimeout
	var started []string
	stop = func() {
		defer client.CloseIdleConnections()
		for _, id := range started {
			if err := w.stopWorkspace(context.WithoutCancel(ctx), client, sessionID, id); err != nil {
				progress("  stop %s: %v", id, err)
			}
		}
	}
	for _, id := range ids {
		if err := w.startWorkspace(ctx, client, sessionID, id); err != nil {
			return stop, err
		}
		started = append(started, id)
	}
	return stop, nil
}

// stateRounds captures w's state answer (which must list want
// workspaces), serves it from a probe, and runs the probe/W1 rounds.
func stateRounds(ctx context.Context, cfg config, w *wharf, sessionID string, want int, label string,
	progress func(string, ...any)) (body []byte, running int, rows []concRow, err error) {
	stateURL := w.base + "/api/hub/state"
	status, body, err := get(ctx, http.MethodGet, stateURL, bearer(sessionID))
	if err != nil || status != http.StatusOK {
		return nil, 0, nil, fmt.Errorf("%s preflight: status %d, %v", label, status, err)
	}
	if running, err = countRunning(body, want); err != nil {
		return nil, 0, nil, fmt.Errorf("%s preflight: %w", label, err)
	}
	probe, err := startServer(probeHandler(body))
	if err != nil {
		return nil, 0, nil, fmt.Errorf("start probe: %w", err)
	}
	defer probe.close()
	pt := target{url: probe.base + "/api/hub/state", header: http.Header{}}
	w1 := target{url: stateURL, header: bearer(sessionID)}
	rows, err = runRounds(ctx, cfg, label, pt, probe.accepted, &w1, nil, w.accepted, progress)
	return body, running, rows, err
}

// countRunning checks that a state answer lists want workspaces and
// returns how many of them run.
func countRunning(body []byte, want int) (int, error) {
	var st struct {
		Workspaces []struct {
			Running bool `json:"running"`
		} `json:"workspaces"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return 0, err
	}
	if len(st.Workspaces) != want {
		return 0, fmt.Errorf("state lists %d workspaces, want %d", len(st.Workspaces), want)
	}
	n := 0
	for _, ws := range st.Workspaces {
		if ws.Running {
			n++
		}
	}
	return n, nil
}
