package daemontest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// CloneFamily starts clone jobs of a local repository into the writer's
// root, so that kills fall while git clones, while the job registers the
// checkout and while nothing runs. A job does not survive a restart and
// its create answers before it ends, so an acknowledged clone may end
// registered or not; what may never be is half of it. Its facts are only
// the faults it finds: "half-registered <workspace>" → its path, for a
// workspace registered in the root whose folder is not the source's clone
// (no repository, or not the source's history), and "misnamed
// <workspace>" for one registered under another display name than its
// job asked. The driver's own check that no journal stays pending covers
// a registration the recovery could not settle.
//
// Each clone is followed by a cancel of it, which answers once the job has
// ended: so a writer holds at most one job at a time (202 answers at once,
// and unbounded clones would only measure how many git processes the
// machine can start), and kills also fall on cancels and rollbacks. After
// a restart (Observe) the last job is forgotten: the new daemon does not
// know it.
func CloneFamily() *Family {
	jobs := &cloneJobsOf{last: map[*Writer]string{}}
	return &Family{Name: "clones", Setup: setupClones, Next: jobs.next, Observe: jobs.observe}
}

// observe forgets the writer's last job (a restarted daemon does not
// know it) and observes its clones.
func (c *cloneJobsOf) observe(ctx context.Context, w *Writer, st HubState) (Model, error) {
	c.mu.Lock()
	delete(c.last, w)
	c.mu.Unlock()
	return observeClones(ctx, w, st)
}

// cloneJobsOf remembers each writer's last job, to cancel it next.
type cloneJobsOf struct {
	mu   sync.Mutex
	last map[*Writer]string
}

func (c *cloneJobsOf) next(w *Writer) (Op, error) {
	c.mu.Lock()
	id := c.last[w]
	delete(c.last, w)
	c.mu.Unlock()
	if id != "" {
		return Op{Name: "cancel", Method: "POST", Path: "api/hub/clone-jobs/" + id + "/cancel",
			Acked: func(Model, []byte) error { return nil }}, nil
	}
	op, _ := nextClone(w)
	acked := op.Acked
	op.Acked = func(m Model, answer []byte) error {
		var res struct {
			JobID string `json:"jobId"`
		}
		if json.Unmarshal(answer, &res) == nil && res.JobID != "" {
			c.mu.Lock()
			c.last[w] = res.JobID
			c.mu.Unlock()
		}
		return acked(m, answer)
	}
	return op, nil
}

// cloneSource is the writer's source repository, in its root.
func cloneSource(w *Writer) string { return filepath.Join(w.Root, "source") }

func setupClones(ctx context.Context, w *Writer) error {
	src := cloneSource(w)
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=Crash", "-c", "user.email=crash@example.com", "commit", "-q", "--allow-empty", "-m", "the source"},
	} {
		if out, err := exec.CommandContext(ctx, "git", append([]string{"-C", src}, args...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v: %s", args, err, out)
		}
	}
	return nil
}

func nextClone(w *Writer) (Op, error) {
	name := w.NewName("c")
	return Op{Name: "clone", Method: "POST", Path: "api/hub/clone-jobs",
		Body: map[string]any{"url": cloneSource(w), "dest": w.Root, "folderName": name, "displayName": "Clone " + name},
		Acked: func(_ Model, answer []byte) error {
			var res struct {
				JobID string `json:"jobId"`
			}
			if err := json.Unmarshal(answer, &res); err != nil || res.JobID == "" {
				return fmt.Errorf("clone answer %q has no job id (%v)", answer, err)
			}
			return nil
		},
	}, nil
}

// observeClones reports the faults of the clones registered in the
// writer's root; the source is never registered.
func observeClones(_ context.Context, w *Writer, st HubState) (Model, error) {
	m := Model{}
	for _, ws := range st.Workspaces {
		if !within(ws.Path, w.Root) {
			continue
		}
		out, err := exec.Command("git", "-C", ws.Path, "log", "-1", "--format=%s").Output()
		if err != nil || string(out) != "the source\n" {
			m["half-registered "+ws.ID] = ws.Path
		}
		if ws.DisplayName != "Clone "+filepath.Base(ws.Path) {
			m["misnamed "+ws.ID] = ws.DisplayName
		}
	}
	return m, nil
}
