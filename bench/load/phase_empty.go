package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sync"
)

// runEmptyHub runs W1, W2 (with the cross-origin oracle), the diagnosis and
// W10 against a Wharf with no workspace, each as selected, and closes that
// Wharf and its probe before returning.
func runEmptyHub(ctx context.Context, cfg config, rep *report, progress func(string, ...any)) error {
	progress("starting Wharf (default argon2id cost) and the probe")
	w, err := startWharf(ctx, nil, 0)
	if err != nil {
		return fmt.Errorf("start wharf: %w", err)
	}
	defer w.close()
	sessionID, _, err := w.login(ctx, "bench bearer")
	if err != nil {
		return err
	}
	_, cookie, err := w.login(ctx, "bench cookie")
	if err != nil {
		return err
	}
	stateURL := w.base + "/api/hub/state"
	w1 := target{url: stateURL, header: bearer(sessionID)}
	w2 := target{url: stateURL, header: w.browserCookie(cookie, w.base, "same-origin")}
	// The probe answers the very bytes Wharf's state answer carries,
	// captured once here rather than written down, so it follows every
	// change of the answer's shape.
	for name, t := range map[string]target{"W1": w1, "W2": w2} {
		status, body, err := get(ctx, http.MethodGet, t.url, t.header)
		if err != nil || status != http.StatusOK {
			return fmt.Errorf("%s preflight: status %d, %v", name, status, err)
		}
		rep.StateBody = body
	}
	probe, err := startServer(probeHandler(rep.StateBody))
	if err != nil {
		return fmt.Errorf("start probe: %w", err)
	}
	defer probe.close()
	pt := target{url: probe.base + "/api/hub/state", header: http.Header{}}

	// The probe, W1 and W2 one after the other at each concurrency, in
	// rounds, so drift over the run touches all three alike.
	if cfg.hasAny("w1", "w2") {
		var t1, t2 *target
		if cfg.has("w1") {
			t1 = &w1
		}
		if cfg.has("w2") {
			t2 = &w2
		}
		if rep.Rows, err = runRounds(ctx, cfg, "probe, W1, W2", pt, probe.accepted, t1, t2, w.accepted, progress); err != nil {
			return err
		}
	}

	if cfg.has("w2") && cfg.crossOriginN > 0 {
		progress("W2 cross-origin oracle, %d requests", cfg.crossOriginN)
		co, err := w.crossOrigin(ctx, cfg.crossOriginN)
		if err != nil {
			return fmt.Errorf("cross-origin oracle: %w", err)
		}
		rep.CrossOrigin = &co
	}

	if cfg.has("w1") && !cfg.skipDiagnosis {
		progress("diagnosis: unauthenticated GET (401) at %d conns, hub.Authenticate and hub.State in-process", cfg.attackConns)
		noAuth := target{url: stateURL, header: http.Header{}}
		d := closedLoop(ctx, noAuth, cfg.attackConns, cfg.warmup, cfg.duration, cfg.maxPerWorker, w.accepted, nil)
		rep.Unauth = &d
		rep.Auth = diagnoseAuthenticate(ctx, w, sessionID)
		st, err := diagnoseState(ctx, w, sessionID)
		if err != nil {
			return fmt.Errorf("diagnosis: %w", err)
		}
		rep.StateCall = &st
		if rep.SQL, err = diagnoseSQL(ctx, w, sessionID); err != nil {
			return fmt.Errorf("diagnosis: %w", err)
		}
	}

	if cfg.has("w10") {
		runW10(ctx, cfg, rep, w, w1, progress)
	}
	return ctx.Err()
}

// runW10 runs a W1 baseline at the attack's concurrency and length, then
// the same W1 run with the login attack in its measured window.
func runW10(ctx context.Context, cfg config, rep *report, w *wharf, w1 target, progress func(string, ...any)) {
	progress("W10 baseline: W1 at %d conns for %v", cfg.attackConns, cfg.attackOver)
	for attempt := 1; attempt <= 1+cfg.retries; attempt++ {
		b := closedLoop(ctx, w1, cfg.attackConns, cfg.warmup, cfg.attackOver, cfg.maxPerWorker, w.accepted, nil)
		if attempt == 1 || b.Others < rep.Baseline.Others {
			rep.Baseline = b
		}
		if math.IsNaN(b.Others) || b.Others <= cfg.maxOthers || ctx.Err() != nil {
			break
		}
		progress("  other processes took %.0f %% of the machine during the baseline; running it again", 100*b.Others)
	}
	progress("W10 attack: %d wrong passwords over %v while W1 runs at %d conns", cfg.attackN, cfg.attackOver, cfg.attackConns)
	started := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		rep.During = closedLoop(ctx, w1, cfg.attackConns, cfg.warmup, cfg.attackOver, cfg.maxPerWorker, w.accepted, started)
	})
	select {
	case <-started:
	case <-ctx.Done():
	}
	a := loginAbuse(ctx, w.base+"/login", benchUser, cfg.attackN, cfg.attackOver, w.hub.PasswordVerifications)
	rep.Attack = &a
	wg.Wait()
}
