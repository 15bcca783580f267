package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/wharfhub/wharf/adapters/child/docfeed"
)

// D1: the document topic of a real `wharf session` child on a large Git
// repository, through the Hub's live stream, against the child's document
// feed (docfeed) run in this process on the same repository.
const (
	d1Files, d1Saves = 50_000, 30
	d1MaxComplete    = 3 * time.Second
	d1MaxSaveP99     = 300 * time.Millisecond
	d1Limit          = 6 * time.Minute
	d1SaveGap        = 250 * time.Millisecond // each save its own publish: the feed waits for 150 ms of quiet
)

// d1Run is one side of D1: from the subscription to the first document
// data and to a complete snapshot; each save to the patch upserting it.
type d1Run struct {
	firstData, complete time.Duration
	saves               summary
	err                 string
}

// d1Measure measures a side reading updates with next; save i rewrites doc dirBase+i.
func d1Measure(root string, dirBase int, next func() ([]byte, error)) (r d1Run) {
	t0, saves := time.Now(), []time.Duration{}
	for r.complete == 0 && r.err == "" {
		data, err := next()
		if err != nil {
			r.err = "waiting for the complete snapshot: " + err.Error()
		} else if r.firstData == 0 {
			r.firstData = time.Since(t0)
		}
		if bytes.Contains(data, []byte(`"discovery":{"status":"ready"`)) {
			r.complete = time.Since(t0)
		}
	}
	for i := 0; i < d1Saves && r.err == ""; i++ {
		time.Sleep(d1SaveGap)
		d := dirBase + i
		rel, start := filepath.Join(fmt.Sprintf("area%02d", d/50), fmt.Sprintf("dir%03d", d), fmt.Sprintf("doc%05d.md", d*100)), time.Now()
		if err := os.WriteFile(filepath.Join(root, rel), fmt.Appendf(nil, "# save %d\n", i), 0o644); err != nil {
			r.err = err.Error()
		}
		for r.err == "" {
			if data, err := next(); err != nil {
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

// runD1 generates the repository (100 files a directory, as docfeed's benchmark).
func runD1(ctx context.Context, e *env) ([]verdict, error) {
	ctx, cancel := context.WithTimeout(ctx, d1Limit)
	defer cancel()
	tmp, err := mkTemp(e, "wharf-bench-d1-")
	if err == nil {
		err = e.buildChild(ctx)
	}
	root := filepath.Join(tmp, "repo")
	e.progress("D1: generating a committed Git repository of %d files", d1Files)
	for i := 0; i < d1Files && err == nil; i++ {
		dir := filepath.Join(root, fmt.Sprintf("area%02d", i/5000), fmt.Sprintf("dir%03d", i/100))
		name, data := fmt.Sprintf("doc%05d.md", i), bytes.Repeat([]byte("Some words of a document, line after line.\n"), 5)
		if i%10 >= 7 {
			name = fmt.Sprintf("notes%05d.txt", i)
		}
		if i%10 == 9 {
			name, data = fmt.Sprintf("blob%05d.bin", i), []byte("\x00\x01binary")
		}
		if err = os.MkdirAll(dir, 0o755); err == nil {
			err = os.WriteFile(filepath.Join(dir, name), data, 0o644)
		}
	}
	if err == nil { // the user's and the system's Git configuration aside
		cmd := exec.CommandContext(ctx, "sh", "-c", "git init -q -b main && git add -A && git -c user.name=Bench -c user.email=bench@example.invalid commit -q -m generated")
		cmd.Dir, cmd.Env = root, append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, cerr := cmd.CombinedOutput(); cerr != nil {
			err = fmt.Errorf("git: %w: %s", cerr, bytes.TrimSpace(out))
		}
	}
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, err
	}
	f := docfeed.New(root, docfeed.Options{})
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.Run(fctx) }()
	feed := d1Run{err: "no subscription"}
	if sub, err := f.Subscribe(fctx, ""); err == nil {
		feed = d1Measure(root, 100, func() ([]byte, error) {
			nctx, cancel := context.WithTimeout(fctx, 30*time.Second)
			defer cancel()
			return sub.Next(nctx)
		})
		sub.Close()
	}
	stop()
	<-done
	w, err := e.openWharf(ctx, nil, nil)
	var ids []string
	if err == nil {
		ids, err = w.register(ctx, root)
	}
	if err == nil {
		err = w.lifecycle(ctx, ids[0], "start")
	}
	if err != nil {
		return nil, err
	}
	defer w.lifecycle(context.WithoutCancel(ctx), ids[0], "stop")
	hub := d1Run{err: "no stream"}
	if c, err := dialLive(ctx, w.addr, livePath(ids[0], false, `[{"topic":"document"}]`, ""), bearer(w.session)); err == nil {
		hub = d1Measure(root, 200, func() ([]byte, error) {
			for c.conn.SetReadDeadline(time.Now().Add(30 * time.Second)); ; {
				f, err := c.next()
				if v, ok := parseEnvelope(f); err != nil || (ok && string(v.topic) == "document" && v.data != nil) {
					return v.data, err
				}
			}
		})
		c.conn.Close()
	}
	return []verdict{
		{fmt.Sprintf("D1 first complete document snapshot, %d files", d1Files), fmt.Sprintf("%s from the stream's opening (first "+
			"document data after %s)%s; the child's feed in-process: %s (%.2f × it)", secs(hub.complete), ms(hub.firstData), errNote(hub.err),
			secs(feed.complete), ratio(float64(hub.complete), float64(feed.complete))), "≤ " + secs(d1MaxComplete) + " (absolute)",
			hub.err == "" && hub.complete > 0 && hub.complete <= d1MaxComplete},
		{"D1 save → patch p99", fmt.Sprintf("%s over %d saves (p50 %s, max %s); the child's feed in-process: p99 %s (%.2f × it)%s",
			ms(hub.saves.P99), hub.saves.N, ms(hub.saves.P50), ms(hub.saves.Max), ms(feed.saves.P99),
			ratio(float64(hub.saves.P99), float64(feed.saves.P99)), errNote(feed.err)), "≤ " + ms(d1MaxSaveP99) + " (absolute)",
			hub.err == "" && hub.saves.N >= 20 && hub.saves.P99 <= d1MaxSaveP99}}, nil
}
