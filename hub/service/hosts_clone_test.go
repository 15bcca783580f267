package service_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// Clone jobs onto a host: git runs on the host the request names, into a
// folder there, and the workspace registered lives there.

func TestACloneJobOnAHostClonesThereAndItsWorkspaceLivesThere(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.addHost("gpu")
	gpu := e.hosts.Machine("gpu")
	gpu.FS.MkdirAll("/srv/src")
	e.dir("/srv/src")
	local := e.register(e.repo("/srv/src/app")) // the same path on the Hub's machine is another folder
	gpu.Git.ScriptClone("https://example.com/me/app.git", fakes.CloneScript{Output: []string{"Cloning into 'app'...\r\n"}})

	id, err := e.CreateCloneJob(e.ctx, e.ann, hub.CreateCloneJobRequest{URL: "https://example.com/me/app.git",
		Dest: "/srv/src", Backend: "ssh:gpu", Start: true})
	is.NoErr(err) // accepted
	evs := e.cloneEvents(id)
	res := evs[len(evs)-1].Result
	is.True(res != nil)
	is.Equal(res.Status, hub.CloneSucceeded) // succeeded
	is.Equal(res.Target, "/srv/src/app")     // into the folder on the host
	is.True(res.Running)                     // and started

	is.Equal(gpu.Git.Calls(fakes.GitClone), 1) // git ran on the host
	is.Equal(e.git.Calls(fakes.GitClone), 0)   // and not on the Hub's machine
	fi, err := gpu.FS.Lstat("/srv/src/app")
	is.NoErr(err)
	is.True(fi.IsDir())                                  // the clone is there
	is.Equal(gpu.Backend.StartCount(res.WorkspaceID), 1) // its session started there
	is.Equal(gpu.Backend.Spec(res.WorkspaceID).Path, "/srv/src/app")
	st, err := e.State(e.ctx, e.ann)
	is.NoErr(err)
	backends := map[string]string{}
	for _, w := range st.Workspaces {
		backends[w.ID] = w.Backend
	}
	is.Equal(backends, map[string]string{res.WorkspaceID: "ssh:gpu", local: "local"}) // the workspace lives on the host, beside the local one
}

func TestACloneJobOnAHostIsRefusedByWhatIsOnThatHost(t *testing.T) {
	e := newEnv(t)
	e.addHost("gpu")
	gpu := e.hosts.Machine("gpu")
	gpu.FS.MkdirAll("/srv/src/taken")
	e.dir("/home/ann/src") // a folder on the Hub's machine only
	for _, tc := range []struct {
		name string
		req  hub.CreateCloneJobRequest
		kind hub.Kind
	}{
		{"an unknown host", hub.CreateCloneJobRequest{URL: "https://example.com/a.git", Dest: "/srv/src", Backend: "ssh:nope"}, hub.Invalid},
		{"an unknown backend", hub.CreateCloneJobRequest{URL: "https://example.com/a.git", Dest: "/srv/src", Backend: "docker"}, hub.Invalid},
		{"a dest only the Hub's machine has", hub.CreateCloneJobRequest{URL: "https://example.com/a.git", Dest: "/home/ann/src", Backend: "ssh:gpu"}, hub.Invalid},
		{"a folder that exists on the host", hub.CreateCloneJobRequest{URL: "https://example.com/taken.git", Dest: "/srv/src", Backend: "ssh:gpu"}, hub.Conflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := e.CreateCloneJob(e.ctx, e.ann, tc.req)
			is.Equal(hub.KindOf(err), tc.kind)         // refused with its status
			is.Equal(gpu.Git.Calls(fakes.GitClone), 0) // and git never ran there
			is.Equal(e.git.Calls(fakes.GitClone), 0)   // nor here
		})
	}
}

func TestAFailedCloneOnAHostLeavesNoWorkspace(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.addHost("gpu")
	gpu := e.hosts.Machine("gpu")
	gpu.FS.MkdirAll("/srv/src")
	gpu.Git.ScriptClone("https://example.com/me/app.git", fakes.CloneScript{Exit: 128})
	id, err := e.CreateCloneJob(e.ctx, e.ann, hub.CreateCloneJobRequest{URL: "https://example.com/me/app.git",
		Dest: "/srv/src", Backend: "ssh:gpu"})
	is.NoErr(err)
	evs := e.cloneEvents(id)
	res := evs[len(evs)-1].Result
	is.Equal(res.Status, hub.CloneFailed) // git's failure is the job's
	_, err = gpu.FS.Lstat("/srv/src/app")
	is.True(errors.Is(err, fs.ErrNotExist)) // nothing is left on the host
	is.Equal(len(e.workspaces()), 0)        // and nothing registered
}

// A host that stops answering between the checks and git's start refuses
// the job with 503, in the host's own words, and holds nothing: the same
// request is accepted once the host answers again.
func TestACloneJobOnAHostThatCannotBeReachedIsRefusedWith503AndHoldsNothing(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.addHost("gpu")
	gpu := e.hosts.Machine("gpu")
	gpu.FS.MkdirAll("/srv/src")
	req := hub.CreateCloneJobRequest{URL: "https://example.com/me/app.git", Dest: "/srv/src", Backend: "ssh:gpu"}
	gpu.Git.FailNext(fakes.GitClone, hub.Wrap(hub.Unavailable, errors.New("connection refused"), "host gpu cannot be reached"))

	_, err := e.CreateCloneJob(e.ctx, e.ann, req)
	is.Equal(hub.KindOf(err), hub.Unavailable)                           // refused with 503
	is.True(strings.Contains(err.Error(), "host gpu cannot be reached")) // saying which machine
	_, err = gpu.FS.Lstat("/srv/src/app")
	is.True(errors.Is(err, fs.ErrNotExist)) // nothing made there

	gpu.Git.ScriptClone(req.URL, fakes.CloneScript{})
	id, err := e.CreateCloneJob(e.ctx, e.ann, req)
	is.NoErr(err) // the target was not left reserved, nor the user's clone slot taken
	evs := e.cloneEvents(id)
	is.Equal(evs[len(evs)-1].Result.Status, hub.CloneSucceeded) // and the retry clones
}
