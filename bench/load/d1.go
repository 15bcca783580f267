package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/wharfhub/wharf/adapters/session/docfeed"
)

// D1: the document topic of a real `wharf session` child on a large Git
// repository, through the Hub's live stream, against the child's document
// feed (package docfeed) in this process on the same repository.
const (
	d1Files       = 50_000
	d1Saves       = 30
	d1MaxComplete = 3 * time.Second
	d1MaxSaveP99  = 300 * time.Millisecond
	d1Limit       = 6 * time.Minute
	d1SaveGap     = 250 * time.Millisecond // each save its own publish: the feed waits for 150 ms of quiet
)

// d1Run is one side of D1.
type d1Run struct {
	firstData, ready, complete time.Duration // from the subscription
	saves                      summary       // write to the patch upserting the file
	err                        string
}

// generateRepo writes and commits n files under parent: 100 per
// directory, markdown, text and some binary, as docfeed's own benchmark.
func generateRepo(ctx context.Context, parent string, n int) (root string, env []string, err error) {
	home, root := filepath.Join(parent, "home"), filepath.Join(parent, "repo")
	env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}
	git := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir, cmd.Env = root, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %w: %s", args, err, bytes.TrimSpace(out))
		}
		return nil
	}
	body := bytes.Repeat([]byte("Some words of a document, line after line.\n"), 5)
	err = os.MkdirAll(home, 0o700)
	if err == nil {
		err = os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[init]\n\tdefaultBranch = main\n[user]\n\tname = Bench\n\temail = bench@example.invalid\n"), 0o600)
	}
	for i := 0; i < n && err == nil; i++ {
		dir := filepath.Join(root, fmt.Sprintf("area%02d", i/5000), fmt.Sprintf("dir%03d", i/100))
		name, data := fmt.Sprintf("doc%05d.md", i), body
		switch i % 10 {
		case 7, 8:
			name = fmt.Sprintf("notes%05d.txt", i)
		case 9:
			name, data = fmt.Sprintf("blob%05d.bin", i), []byte("\x00\x01binary")
		}
		if err = os.MkdirAll(dir, 0o755); err == nil {
			err = os.WriteFile(filepath.Join(dir, name), data, 0o644)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "generated"}} {
		if err == nil {
			err = git(args...)
		}
	}
	return root, env, err
}

// d1Measure measures one side: next returns the next document update
// (data) or says ready; the saves rewrite files of the dirBase range.
func d1Measure(root string, dirBase int, next func() (data []byte, ready bool, err error)) (r d1Run) {
	t0 := time.Now()
	for r.complete == 0 {
		data, ready, err := next()
		switch since := time.Since(t0); {
		case err != nil:
			r.err = "waiting for the complete snapshot: " + err.Error()
			return r
		case ready && r.ready == 0:
			r.ready = since
		case data != nil && r.firstData == 0:
			r.firstData = since
		}
		if bytes.Contains(data, []byte(`"discovery":{"status":"ready"`)) {
			r.complete = time.Since(t0)
		}
	}
	var saves []time.Duration
	for i := 0; i < d1Saves && r.err == ""; i++ {
		time.Sleep(d1SaveGap)
		d := dirBase + i
		rel := filepath.Join(fmt.Sprintf("area%02d", d/50), fmt.Sprintf("dir%03d", d), fmt.Sprintf("doc%05d.md", d*100))
		start := time.Now()
		if err := os.WriteFile(filepath.Join(root, rel), fmt.Appendf(nil, "# save %d\n", i), 0o644); err != nil {
			r.err = err.Error()
		}
		for r.err == "" {
			data, _, err := next()
			if err != nil {
				r.err = fmt.Sprintf("save %d: %v", i, err)
			} else if bytes.Contains(data[:min(len(data), 64)], []byte(`"kind":"patch"`)) && bytes.Contains(data, []byte(`"relativePath":"`+rel+`"`)) {
				saves = append(saves, time.Since(start))
				break
			}
		}
	}
	r.saves = summarize(saves)
	return r
}

// docNext reads a live stream's document topic for d1Measure.
func docNext(c *liveConn) func() ([]byte, bool, error) {
	return func() ([]byte, bool, error) {
		c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		for {
			f, err := c.next()
			if err != nil {
				return nil, false, err
			}
			if v, ok := parseEnvelope(f); ok && string(v.topic) == "document" {
				return v.data, string(v.kind) == "ready", nil
			}
		}
	}
}

func runD1(ctx context.Context, e *env) (*section, error) {
	if err := e.buildChild(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, d1Limit)
	defer cancel()
	tmp, err := mkTemp(e, "wharf-bench-d1-")
	if err != nil {
		return nil, err
	}
	e.progress("D1: generating a committed Git repository of %d files", d1Files)
	t0 := time.Now()
	root, env, err := generateRepo(ctx, tmp, d1Files)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, err
	}
	generated := time.Since(t0)
	e.progress("D1 baseline: the document feed in-process")
	feed := func() d1Run {
		f := docfeed.New(root, docfeed.Options{Env: env})
		fctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- f.Run(fctx) }()
		defer func() { stop(); <-done }()
		sub, err := f.Subscribe(fctx, "")
		if err != nil {
			return d1Run{err: err.Error()}
		}
		defer sub.Close()
		return d1Measure(root, 100, func() ([]byte, bool, error) {
			nctx, cancel := context.WithTimeout(fctx, 30*time.Second)
			defer cancel()
			b, err := sub.Next(nctx)
			return b, false, err
		})
	}()
	e.progress("D1: a Wharf running the child on the repository, through a live stream")
	w, err := e.openWharf(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	ids, err := w.register(ctx, []string{root})
	if err == nil {
		err = w.lifecycle(ctx, ids[0], "start")
	}
	if err != nil {
		return nil, err
	}
	defer w.lifecycle(context.WithoutCancel(ctx), ids[0], "stop")
	path, hub := livePath(ids[0], false, `[{"topic":"document"}]`, ""), d1Run{err: "no stream"}
	joiner := "—"
	if c, err := dialLive(ctx, w.addr, path, bearer(w.session), nil); err == nil {
		hub = d1Measure(root, 200, docNext(c))
		c.conn.Close()
		t1 := time.Now() // a later joiner gets the Hub's materialized snapshot
		if j, err := dialLive(ctx, w.addr, path, bearer(w.session), nil); err == nil {
			if data, _, err := docNext(j)(); err == nil {
				joiner = fmt.Sprintf("%s after %s", kb(float64(len(data))), ms(time.Since(t1)))
			}
			j.conn.Close()
		}
	}
	t := newTable("side", "first document data", "`ready`", "complete", "save → patch p50", "p90", "p99", "max", "saves")
	for _, x := range []struct {
		name string
		r    d1Run
	}{{"`docfeed` in-process (baseline)", feed}, {"Wharf: child + Hub + live stream", hub}} {
		t.add(x.name, ms(x.r.firstData), ms(x.r.ready), secs(x.r.complete), ms(x.r.saves.P50), ms(x.r.saves.P90), ms(x.r.saves.P99),
			ms(x.r.saves.Max), fmt.Sprint(x.r.saves.N)+errNote(x.r.err))
	}
	return &section{title: "D1: the document topic of a real workspace child", tables: []*table{t}, text: []string{fmt.Sprintf(
		"A committed Git repository of %d files (%s to write and commit). The baseline is the child's document feed, `docfeed.New` "+
			"and `Subscribe` in this process; then a Wharf whose sessions run the built `wharf session` registers and starts the "+
			"repository, and a live stream subscribes to its document topic: the Hub opens the child's feed, which starts indexing, "+
			"and relays it. **Complete**: from the subscription to the first update whose discovery is `ready`. Then %d saves %s "+
			"apart, each rewriting another markdown file: from the write to the patch upserting it. A later joiner got the Hub's "+
			"materialized snapshot: %s.", d1Files, secs(generated), d1Saves, ms(d1SaveGap), joiner)},
		verdicts: []verdict{
			{fmt.Sprintf("D1 first complete document snapshot, %d files", d1Files), fmt.Sprintf("%s from the stream's opening (first "+
				"document data after %s, `ready` after %s)%s; the child's feed in-process: %s (%.2f × it)", secs(hub.complete),
				ms(hub.firstData), ms(hub.ready), errNote(hub.err), secs(feed.complete), ratio(float64(hub.complete), float64(feed.complete))),
				"≤ " + secs(d1MaxComplete) + " (absolute)", hub.err == "" && hub.complete > 0 && hub.complete <= d1MaxComplete},
			{"D1 save → patch p99", fmt.Sprintf("%s over %d saves (p50 %s, max %s); the child's feed in-process: p99 %s (%.2f × it)%s",
				ms(hub.saves.P99), hub.saves.N, ms(hub.saves.P50), ms(hub.saves.Max), ms(feed.saves.P99),
				ratio(float64(hub.saves.P99), float64(feed.saves.P99)), errNote(feed.err)), "≤ " + ms(d1MaxSaveP99) + " (absolute)",
				hub.err == "" && hub.saves.N >= 20 && hub.saves.P99 <= d1MaxSaveP99}}}, nil
}
