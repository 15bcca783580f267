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
// feed (docfeed) run in this process on the same repository.
const (
	d1Files, d1Saves = 50_000, 30
	d1MaxComplete    = 3 * time.Second
	d1MaxSaveP99     = 300 * time.Millisecond
	d1Limit          = 6 * time.Minute
	d1SaveGap        = 250 * time.Millisecond // each save its own publish: the feed waits for 150 ms of quiet
)

// d1Run is one side of D1: from the subscription to the first document
// data, to `ready` (the Hub's stream only) and to the first update whose
// discovery is ready; and the saves, from the write to the patch
// upserting the file.
type d1Run struct {
	firstData, ready, complete time.Duration
	saves                      summary
	err                        string
}

// d1Measure measures one side: next returns its next document update
// (data) or says ready; save i rewrites markdown file dirBase+i.
func d1Measure(root string, dirBase int, next func() (data []byte, ready bool, err error)) (r d1Run) {
	t0, saves := time.Now(), []time.Duration{}
	for r.complete == 0 && r.err == "" {
		data, ready, err := next()
		switch since := time.Since(t0); {
		case err != nil:
			r.err = "waiting for the complete snapshot: " + err.Error()
		case ready && r.ready == 0:
			r.ready = since
		case data != nil && r.firstData == 0:
			r.firstData = since
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

// runD1 generates the repository (100 files per directory: markdown, text
// and some binary, as docfeed's own benchmark does), measures the feed in
// this process, then a Wharf running the child on it, through a live
// stream subscribed to its document topic.
func runD1(ctx context.Context, e *env) (*section, error) {
	ctx, cancel := context.WithTimeout(ctx, d1Limit)
	defer cancel()
	tmp, err := mkTemp(e, "wharf-bench-d1-")
	if err == nil {
		err = e.buildChild(ctx)
	}
	root, home := filepath.Join(tmp, "repo"), filepath.Join(tmp, "home")
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}
	if err == nil {
		err = os.MkdirAll(home, 0o700)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[init]\n\tdefaultBranch = main\n[user]\n\tname = Bench\n\temail = bench@example.invalid\n"), 0o600)
	}
	e.progress("D1: generating a committed Git repository of %d files", d1Files)
	t0 := time.Now()
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
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "generated"}} {
		if err == nil {
			cmd := exec.CommandContext(ctx, "git", args...)
			cmd.Dir, cmd.Env = root, env
			if out, cerr := cmd.CombinedOutput(); cerr != nil {
				err = fmt.Errorf("git %v: %w: %s", args, cerr, bytes.TrimSpace(out))
			}
		}
	}
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, err
	}
	generated := time.Since(t0)
	e.progress("D1 baseline: the document feed in this process")
	f := docfeed.New(root, docfeed.Options{Env: env})
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.Run(fctx) }()
	feed := d1Run{err: "no subscription"}
	if sub, err := f.Subscribe(fctx, ""); err == nil {
		feed = d1Measure(root, 100, func() ([]byte, bool, error) {
			nctx, cancel := context.WithTimeout(fctx, 30*time.Second)
			defer cancel()
			b, err := sub.Next(nctx)
			return b, false, err
		})
		sub.Close()
	}
	stop()
	<-done
	e.progress("D1: a Wharf running the child on the repository, through a live stream")
	w, err := e.openWharf(ctx, nil, nil)
	var ids []string
	if err == nil {
		ids, err = w.register(ctx, []string{root})
	}
	if err == nil {
		err = w.lifecycle(ctx, ids[0], "start")
	}
	if err != nil {
		return nil, err
	}
	defer w.lifecycle(context.WithoutCancel(ctx), ids[0], "stop")
	hub := d1Run{err: "no stream"}
	if c, err := dialLive(ctx, w.addr, livePath(ids[0], false, `[{"topic":"document"}]`, ""), bearer(w.session), nil); err == nil {
		hub = d1Measure(root, 200, func() ([]byte, bool, error) {
			for c.conn.SetReadDeadline(time.Now().Add(30 * time.Second)); ; {
				f, err := c.next()
				if v, ok := parseEnvelope(f); err != nil || (ok && string(v.topic) == "document") {
					return v.data, string(v.kind) == "ready", err
				}
			}
		})
		c.conn.Close()
	}
	t := newTable("side", "first document data", "`ready`", "complete", "save → patch p50", "p90", "p99", "max", "saves")
	for i, x := range []d1Run{feed, hub} {
		t.add([]string{"`docfeed` in-process (baseline)", "Wharf: child + Hub + live stream"}[i], ms(x.firstData), ms(x.ready), secs(x.complete),
			ms(x.saves.P50), ms(x.saves.P90), ms(x.saves.P99), ms(x.saves.Max), fmt.Sprint(x.saves.N)+errNote(x.err))
	}
	return &section{title: "D1: the document topic of a real workspace child", tables: []*table{t}, text: []string{fmt.Sprintf("A committed "+
		"Git repository of %d files (%s to write and commit); the baseline is `docfeed.New` and `Subscribe` in this process; then a "+
		"Wharf registers and starts it and a live stream subscribes to its document topic: the Hub opens the child's feed, which starts "+
		"indexing, and relays it. Then %d saves %s apart, each of another markdown file.", d1Files, secs(generated), d1Saves, ms(d1SaveGap))},
		verdicts: []verdict{
			vd(fmt.Sprintf("D1 first complete document snapshot, %d files", d1Files), "≤ "+secs(d1MaxComplete)+" (absolute)",
				hub.err == "" && hub.complete > 0 && hub.complete <= d1MaxComplete, "%s from the stream's opening (first document data "+
					"after %s, `ready` after %s)%s; the child's feed in-process: %s (%.2f × it)", secs(hub.complete), ms(hub.firstData),
				ms(hub.ready), errNote(hub.err), secs(feed.complete), ratio(float64(hub.complete), float64(feed.complete))),
			vd("D1 save → patch p99", "≤ "+ms(d1MaxSaveP99)+" (absolute)", hub.err == "" && hub.saves.N >= 20 && hub.saves.P99 <= d1MaxSaveP99,
				"%s over %d saves (p50 %s, max %s); the child's feed in-process: p99 %s (%.2f × it)%s", ms(hub.saves.P99), hub.saves.N,
				ms(hub.saves.P50), ms(hub.saves.Max), ms(feed.saves.P99), ratio(float64(hub.saves.P99), float64(feed.saves.P99)), errNote(feed.err))}}, nil
}
