package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// d1Limit bounds D1 past the child's build: generating the repository and
// both sides' runs.
const d1Limit = 6 * time.Minute

// runD1 builds the workspace child, generates the repository, runs the
// in-process feed on it, then a Wharf whose local backend runs the child
// on it, and measures through a live stream. Everything it started is
// gone when it returns.
func runD1(ctx context.Context, rep *report, progress func(string, ...any)) error {
	res := &d1Result{Files: d1Files}
	rep.D1 = res
	tmp, err := os.MkdirTemp("", "wharf-bench-d1-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	progress("D1: building ./cmd/wharf")
	bin, err := buildChild(ctx, tmp)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, d1Limit)
	defer cancel()
	progress("D1: generating a committed Git repository of %d files", d1Files)
	t0 := time.Now()
	root, env, err := generateRepo(ctx, tmp, d1Files)
	if err != nil {
		return fmt.Errorf("D1: %w", err)
	}
	res.Generate = time.Since(t0)
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return err
	}
	progress("D1 baseline: the document feed in-process, then %d saves", d1Saves)
	res.Feed = d1Feed(ctx, root, env)
	progress("  complete after %s, save p99 %s%s", ms(res.Feed.Complete), ms(res.Feed.Saves.P99), errSuffix(res.Feed.Err))

	progress("D1: a Wharf running the child on the repository, through a live stream")
	w, err := startWharf(ctx, []string{bin}, 0)
	if err != nil {
		return fmt.Errorf("D1: start wharf: %w", err)
	}
	defer w.close()
	sid, _, err := w.login(ctx, "bench d1")
	if err != nil {
		return err
	}
	ids, err := registerPaths(ctx, w, sid, []string{root})
	if err != nil {
		return fmt.Errorf("D1: %w", err)
	}
	client := newClient()
	client.Timeout = 30 * time.Second
	defer client.CloseIdleConnections()
	if err := w.startWorkspace(ctx, client, sid, ids[0]); err != nil {
		return fmt.Errorf("D1: %w", err)
	}
	defer w.stopWorkspace(context.WithoutCancel(ctx), client, sid, ids[0])
	var c *liveConn
	res.Wharf, c = d1Stream(ctx, w, sid, ids[0], root)
	if c != nil {
		c.Close()
	}
	progress("  complete after %s, save p99 %s%s", ms(res.Wharf.Complete), ms(res.Wharf.Saves.P99), errSuffix(res.Wharf.Err))
	if res.Wharf.Err != "" {
		return nil
	}
	// A later joiner gets the state the Hub materialized, at once.
	t0 = time.Now()
	j, err := dialLive(ctx, w.hostPort, livePath(ids[0], false, `[{"topic":"document"}]`, ""), bearer(sid), nil)
	if err != nil {
		res.Err = "joiner: " + err.Error()
		return nil
	}
	defer j.Close()
	j.conn.SetReadDeadline(time.Now().Add(d1FrameLimit))
	for res.Joiner == 0 {
		fr, err := j.next()
		if err != nil {
			res.Err = "joiner: " + err.Error()
			return nil
		}
		if e, ok := parseEnvelope(fr.Data); ok && string(e.Topic) == "document" && string(e.Kind) == "data" {
			res.Joiner, res.JoinerBytes = time.Since(t0), len(e.Data)
		}
	}
	return nil
}
