package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/wharfhub/wharf/adapters/session/docfeed"
)

// D1: the document topic of a real `wharf session` child on a large Git
// repository, through the Hub's live stream, against the child's document
// feed (package docfeed) run in-process on the same repository.
const (
	d1Files       = 50_000
	d1Saves       = 30
	d1MaxComplete = 3 * time.Second
	d1MaxSaveP99  = 300 * time.Millisecond
	// d1FrameLimit bounds the wait for any one awaited frame.
	d1FrameLimit = 30 * time.Second
	// d1SaveGap separates two saves, so each is its own publish (the
	// feed's quiet period is 150 ms).
	d1SaveGap = 250 * time.Millisecond
)

// d1Run is one side of D1: the time to the first complete snapshot and
// the saves.
type d1Run struct {
	FirstData time.Duration // from the subscription to the first document data
	Ready     time.Duration // to `ready` (the Hub's stream only)
	Complete  time.Duration // to the state with discovery ready
	Saves     summary       // write to the patch naming the file
	Err       string
}

// d1Result is D1.
type d1Result struct {
	Files       int
	Generate    time.Duration // writing and committing the repository
	Feed, Wharf d1Run         // the in-process feed (the baseline), the live stream
	Joiner      time.Duration // a second stream's snapshot, once the state was complete
	JoinerBytes int
	Err         string
}

var discoveryReady = []byte(`"discovery":{"status":"ready"`)

// generateRepo writes a committed repository of n files under parent: 100
// per directory, 5,000 per area; markdown, text and some binary, as the
// document feed's own benchmark does.
func generateRepo(ctx context.Context, parent string, n int) (root string, env []string, err error) {
	home := filepath.Join(parent, "home")
	root = filepath.Join(parent, "repo")
	for _, d := range []string{home, root} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", nil, err
		}
	}
	cfg := "[init]\n\tdefaultBranch = main\n[user]\n\tname = Bench\n\temail = bench@example.invalid\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg), 0o600); err != nil {
		return "", nil, err
	}
	env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}
	git := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir, cmd.Env = root, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
		}
		return nil
	}
	if err := git("init", "-q"); err != nil {
		return "", nil, err
	}
	body := bytes.Repeat([]byte("Some words of a document, line after line.\n"), 5)
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("area%02d", i/5000), fmt.Sprintf("dir%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return "", nil, err
			}
		}
		name, data := fmt.Sprintf("doc%05d.md", i), body
		switch i % 10 {
		case 7, 8:
			name = fmt.Sprintf("notes%05d.txt", i)
		case 9:
			name, data = fmt.Sprintf("blob%05d.bin", i), []byte("\x00\x01binary")
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return "", nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.log\n"), 0o644); err != nil {
		return "", nil, err
	}
	if err := git("add", "-A"); err != nil {
		return "", nil, err
	}
	if err := git("commit", "-q", "-m", "generated"); err != nil {
		return "", nil, err
	}
	return root, env, nil
}

// d1SavePath is the markdown file save i of a run rewrites: dir picks the
// run's range of directories, so no two saves touch the same file.
func d1SavePath(dirBase, i int) string {
	d := dirBase + i
	return filepath.Join(fmt.Sprintf("area%02d", d/50), fmt.Sprintf("dir%03d", d), fmt.Sprintf("doc%05d.md", d*100))
}

// isPatchNaming reports whether a DocumentUpdate is a patch upserting rel.
func isPatchNaming(update []byte, rel string) bool {
	return isPatch(update) && bytes.Contains(update, []byte(`"relativePath":"`+rel+`"`))
}

func isPatch(update []byte) bool {
	return bytes.Contains(update[:min(len(update), 64)], []byte(`"kind":"patch"`))
}

// d1Measure measures one side: next returns the next document update (and
// whether it is one, as opposed to a signal; ready reports `ready`), and
// the saves rewrite files of dirBase's range.
func d1Measure(root string, dirBase int, next func(limit time.Duration) (data []byte, ready bool, err error)) d1Run {
	var r d1Run
	t0 := time.Now()
	for r.Complete == 0 {
		data, ready, err := next(d1FrameLimit)
		if err != nil {
			r.Err = "waiting for the complete snapshot: " + err.Error()
			return r
		}
		switch {
		case ready && r.Ready == 0:
			r.Ready = time.Since(t0)
		case data != nil && r.FirstData == 0:
			r.FirstData = time.Since(t0)
		}
		if data != nil && bytes.Contains(data, discoveryReady) {
			r.Complete = time.Since(t0)
		}
	}
	var saves []time.Duration
	for i := range d1Saves {
		time.Sleep(d1SaveGap)
		rel := d1SavePath(dirBase, i)
		start := time.Now()
		if err := os.WriteFile(filepath.Join(root, rel), fmt.Appendf(nil, "# save %d\n", i), 0o644); err != nil {
			r.Err = err.Error()
			break
		}
		for {
			data, _, err := next(d1FrameLimit)
			if err != nil {
				r.Err = fmt.Sprintf("save %d: %v", i, err)
				break
			}
			if data != nil && isPatchNaming(data, rel) {
				saves = append(saves, time.Since(start))
				break
			}
		}
		if r.Err != "" {
			break
		}
	}
	r.Saves = summarize(saves)
	return r
}

// d1Feed is the baseline: the document feed in-process on root.
func d1Feed(ctx context.Context, root string, env []string) d1Run {
	f := docfeed.New(root, docfeed.Options{Env: env})
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() { cancel(); <-done }()
	sub, err := f.Subscribe(ctx, "")
	if err != nil {
		return d1Run{Err: err.Error()}
	}
	defer sub.Close()
	return d1Measure(root, 100, func(limit time.Duration) ([]byte, bool, error) {
		nctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		b, err := sub.Next(nctx)
		return b, false, err
	})
}

// d1Stream measures through the Hub: a live stream on workspace id
// subscribed to its document topic, opened once the session runs.
func d1Stream(ctx context.Context, w *wharf, sessionID, id, root string) (d1Run, *liveConn) {
	c, err := dialLive(ctx, w.hostPort, livePath(id, false, `[{"topic":"document"}]`, ""), bearer(sessionID), nil)
	if err != nil {
		return d1Run{Err: err.Error()}, nil
	}
	r := d1Measure(root, 200, func(limit time.Duration) ([]byte, bool, error) {
		c.conn.SetReadDeadline(time.Now().Add(limit))
		for {
			fr, err := c.next()
			if err != nil {
				return nil, false, err
			}
			e, ok := parseEnvelope(fr.Data)
			if fr.Comment != nil || !ok || string(e.Topic) != "document" {
				continue
			}
			switch string(e.Kind) {
			case "data":
				return e.Data, false, nil
			case "ready":
				return nil, true, nil
			default:
				return nil, false, fmt.Errorf("document %s", e.Kind)
			}
		}
	})
	return r, c
}
