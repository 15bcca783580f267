package docfeed

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	apidoc "github.com/wharfhub/wharf/api"
)

// waitLimit bounds every wait of the tests for an event.
const waitLimit = 5 * time.Second

// gitEnv returns an environment whose HOME holds its own .gitconfig
// (default branch main, a user), so neither the host's configuration nor
// its GIT_* variables reach the git the tests run.
func gitEnv(t testing.TB) []string {
	t.Helper()
	home := tempDir(t)
	cfg := "[init]\n\tdefaultBranch = main\n[user]\n\tname = Test Author\n\temail = test@example.com\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"PATH=" + os.Getenv("PATH"),
	}
}

// tempDir returns a canonical (symlink-free) empty directory.
func tempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// git runs git in dir to set a scene up.
func git(t testing.TB, env []string, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// writeFiles writes files (relative path -> content) under root.
func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fastOptions shortens every delay so tests run quickly.
func fastOptions(t testing.TB, env []string) Options {
	return Options{
		Quiet:        20 * time.Millisecond,
		MaxDelay:     300 * time.Millisecond,
		PollInterval: 50 * time.Millisecond,
		KeepAlive:    50 * time.Millisecond,
		Env:          env,
		Logger:       slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
}

// startFeed runs a feed on root until the test ends; stop ends it early
// and returns Run's error once it has returned.
func startFeed(t testing.TB, root string, opts Options) (f *Feed, stop func() error) {
	t.Helper()
	return startFeedFrom(t, New(root, opts))
}

// startFeedFrom runs f like startFeed.
func startFeedFrom(t testing.TB, f *Feed) (_ *Feed, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(waitLimit):
				err = fmt.Errorf("Run did not return within %v", waitLimit)
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return f, stop
}

// frame is a decoded DocumentUpdate, snapshot or patch.
type frame struct {
	Kind                 string               `json:"kind"`
	Epoch                string               `json:"epoch"`
	Revision             int64                `json:"revision"`
	PreviousRevision     int64                `json:"previousRevision"`
	GeneratedAt          int64                `json:"generatedAt"`
	Discovery            *discovery           `json:"discovery"`
	RepositoryState      *repositoryState     `json:"repositoryState"`
	LatestChange         *latestChange        `json:"latestChange"`
	Roots                []rootGroup          `json:"roots"`
	Repositories         []repositorySnapshot `json:"repositories"`
	HasRepositories      bool                 `json:"-"`
	CompareTarget        CompareTarget        `json:"compareTarget"`
	DefaultDocumentID    json.RawMessage      `json:"defaultDocumentId"` // nil: absent
	ChangedID            *string              `json:"changedId"`
	Scope                scopeJSON            `json:"scope"`
	UnscopedFingerprint  string               `json:"unscopedFingerprint"`
	Upserts              []documentMeta       `json:"upserts"`
	Removals             []removal            `json:"removals"`
	WorkspaceAPIRevision int                  `json:"workspaceApiRevision"`
	InitialFollow        bool                 `json:"initialFollow"`
	Build                *BuildSummary        `json:"build"`
	raw                  []byte
}

// defaultID decodes defaultDocumentId: present reports the field at all.
func (f frame) defaultID() (id string, present bool) {
	if f.DefaultDocumentID == nil {
		return "", false
	}
	_ = json.Unmarshal(f.DefaultDocumentID, &id)
	return id, true
}

func (f frame) String() string {
	s := string(f.raw)
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}

// contract is api/openapi.yaml, loaded once.
var contract = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(apidoc.OpenAPI)
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background())
})

// checkContract validates raw JSON against a schema of the contract.
func checkContract(t testing.TB, schema string, raw []byte) error {
	t.Helper()
	doc, err := contract()
	if err != nil {
		t.Fatalf("load contract: %v", err)
	}
	ref := doc.Components.Schemas[schema]
	if ref == nil {
		t.Fatalf("no schema %s in the contract", schema)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	return ref.Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
}

// client reads a subscription the way the Hub does: it validates every
// frame against the contract and applies it to a model, failing the test
// on a gap (a patch whose previousRevision is not the last revision).
type client struct {
	t         testing.TB
	sub       *Subscription
	epoch     string
	revision  int64
	docs      map[string]documentMeta
	discovery discovery
	repoState repositoryState
	repos     []repositorySnapshot
	defaultID string
	last      frame
}

func subscribe(t testing.TB, f *Feed, key string) *client {
	t.Helper()
	sub, err := f.Subscribe(context.Background(), key)
	if err != nil {
		t.Fatalf("subscribe %q: %v", key, err)
	}
	t.Cleanup(sub.Close)
	return &client{t: t, sub: sub}
}

// read returns the next frame, applied, within waitLimit.
func (c *client) read() frame {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	raw, err := c.sub.Next(ctx)
	if err != nil {
		c.t.Fatalf("next frame: %v (last frame: %v)", err, c.last)
	}
	return c.apply(raw)
}

func (c *client) apply(raw []byte) frame {
	c.t.Helper()
	var fr frame
	if err := json.Unmarshal(raw, &fr); err != nil {
		c.t.Fatalf("frame is not JSON: %v", err)
	}
	fr.raw = raw
	var probe map[string]json.RawMessage
	_ = json.Unmarshal(raw, &probe)
	_, fr.HasRepositories = probe["repositories"]
	schema := map[string]string{"snapshot": "DocumentSnapshot", "patch": "DocumentPatch"}[fr.Kind]
	if schema == "" {
		c.t.Fatalf("frame of unknown kind: %v", fr)
	}
	if err := checkContract(c.t, schema, raw); err != nil {
		c.t.Fatalf("frame breaks the contract's %s: %v\n%v", schema, err, fr)
	}
	switch fr.Kind {
	case "snapshot":
		if fr.Epoch == c.epoch && fr.Revision < c.revision {
			c.t.Fatalf("snapshot goes back from revision %d: %v", c.revision, fr)
		}
		c.docs = map[string]documentMeta{}
		for _, d := range fr.Roots[0].Docs {
			c.docs[d.ID] = *d
		}
		c.discovery, c.repoState, c.repos = *fr.Discovery, *fr.RepositoryState, fr.Repositories
		c.defaultID, _ = fr.defaultID()
	case "patch":
		if fr.Epoch != c.epoch || fr.PreviousRevision != c.revision || fr.Revision <= fr.PreviousRevision {
			c.t.Fatalf("gap: at %s/%d, got patch %d->%d of %s", c.epoch, c.revision,
				fr.PreviousRevision, fr.Revision, fr.Epoch)
		}
		for _, r := range fr.Removals {
			delete(c.docs, r.ID)
		}
		for _, d := range fr.Upserts {
			if d.Revision > fr.Revision {
				c.t.Fatalf("document revision %d above the patch's %d", d.Revision, fr.Revision)
			}
			if old, ok := c.docs[d.ID]; ok && d.Revision < old.Revision {
				c.t.Fatalf("document revision went back from %d to %d", old.Revision, d.Revision)
			}
			c.docs[d.ID] = d
		}
		if fr.Discovery != nil {
			c.discovery = *fr.Discovery
		}
		if fr.RepositoryState != nil {
			c.repoState = *fr.RepositoryState
		}
		if fr.HasRepositories {
			c.repos = fr.Repositories
		}
		if id, ok := fr.defaultID(); ok {
			c.defaultID = id
		}
	}
	c.epoch, c.revision, c.last = fr.Epoch, fr.Revision, fr
	return fr
}

// until reads frames until pred holds for one (returned), failing after
// waitLimit.
func (c *client) until(what string, pred func(frame) bool) frame {
	c.t.Helper()
	deadline := time.Now().Add(waitLimit)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for {
		raw, err := c.sub.Next(ctx)
		if err != nil {
			c.t.Fatalf("waiting for %s: %v (last frame: %v)", what, err, c.last)
		}
		if fr := c.apply(raw); pred(fr) {
			return fr
		}
	}
}

// ready reads until discovery is ready.
func (c *client) ready() frame {
	c.t.Helper()
	return c.until("discovery ready", func(frame) bool { return c.discovery.Status == discoveryReady })
}

// hasUpsert reports whether the frame upserts the document id.
func hasUpsert(fr frame, id string) (documentMeta, bool) {
	for _, d := range fr.Upserts {
		if d.ID == id {
			return d, true
		}
	}
	if fr.Kind == "snapshot" {
		for _, d := range fr.Roots[0].Docs {
			if d.ID == id {
				return *d, true
			}
		}
	}
	return documentMeta{}, false
}

func hasRemoval(fr frame, id string) bool {
	for _, r := range fr.Removals {
		if r.ID == id {
			return true
		}
	}
	return false
}

// relPaths lists the model's documents by relative path.
func (c *client) relPaths() []string {
	var out []string
	for _, d := range c.docs {
		out = append(out, d.RelativePath)
	}
	slices.Sort(out)
	return out
}
