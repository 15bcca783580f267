package service_test

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// addHost adds the host name at destination name+".example.net" or fails
// the test.
func (e *env) addHost(name string) {
	e.t.Helper()
	if _, err := e.AddHost(e.ctx, name, name+".example.net"); err != nil {
		e.t.Fatalf("add host %s: %v", name, err)
	}
}

func TestAHostIsAddedOnlyAfterItsTestPasses(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	gpu := e.hosts.Machine("gpu")
	gpu.FailCheck(hub.Errorf(hub.Unavailable, "the host key of gpu.example.net is not known: add it to known_hosts"))
	_, err := e.AddHost(e.ctx, "gpu", "gpu.example.net")
	is.Equal(hub.KindOf(err), hub.Unavailable)                                                          // the test failed
	is.Equal(hub.MessageOf(err), "the host key of gpu.example.net is not known: add it to known_hosts") // saying why
	hs, err := e.Hosts(e.ctx)
	is.NoErr(err)             // list
	is.Equal(len(hs), 0)      // nothing stored
	is.Equal(gpu.Closes(), 1) // and no connection kept to it

	gpu.FailCheck(nil)
	v, err := e.AddHost(e.ctx, "gpu", "gpu.example.net")
	is.NoErr(err)                        // the test passes now
	is.Equal(v.Backend, "ssh:gpu")       // its backend
	is.Equal(gpu.Checks(), 2)            // tested each time
	is.Equal(e.hosts.Connects("gpu"), 2) // over a new connection
	hs, err = e.Hosts(e.ctx)
	is.NoErr(err)                                                                                                   // list
	is.True(len(hs) == 1 && hs[0].Name == "gpu" && hs[0].Destination == "gpu.example.net" && hs[0].Workspaces == 0) // stored
	_, err = e.AddHost(e.ctx, "gpu", "other.example.net")
	is.Equal(hub.KindOf(err), hub.Conflict)                        // a name taken
	is.NoErr(e.CheckHost(e.ctx, "gpu"))                            // tested again on demand
	is.Equal(hub.KindOf(e.CheckHost(e.ctx, "nope")), hub.NotFound) // an unknown host
}

func TestBadHostNamesAndDestinationsAreRefused(t *testing.T) {
	for _, tc := range []struct{ name, dest string }{
		{"", "x"}, {"GPU", "x"}, {"-gpu", "x"}, {"g_pu", "x"}, {strings.Repeat("a", 33), "x"},
		{"gpu", ""}, {"gpu", "-oProxyCommand=sh"}, {"gpu", "ann@gpu box"}, {"gpu", "gpu\n"}, {"gpu", strings.Repeat("a", 256)},
	} {
		t.Run(tc.name+"@"+tc.dest, func(t *testing.T) {
			is := is.New(t)
			e := newEnv(t)
			_, err := e.AddHost(e.ctx, tc.name, tc.dest)
			is.Equal(hub.KindOf(err), hub.Invalid) // refused
			is.Equal(e.hosts.Connects(tc.name), 0) // before anything is reached
		})
	}
}

func TestAWorkspaceOnAHostLivesOnItsMachine(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.addHost("gpu")
	gpu := e.hosts.Machine("gpu")
	gpu.FS.MkdirAll("/srv/app")
	is.NoErr(gpu.Git.Init(e.ctx, "/srv/app")) // a repository there only

	_, err := e.Register(e.ctx, hub.RegisterRequest{Path: "/srv/app"})
	is.Equal(hub.KindOf(err), hub.NotFound) // not on the Hub's machine
	act, err := e.Register(e.ctx, hub.RegisterRequest{Path: "/srv/app", Backend: "ssh:gpu", Start: true})
	is.NoErr(err)                                       // registered and started there
	is.True(act.Running)                                // running
	is.Equal(gpu.Backend.StartCount(act.ID), 1)         // on the host's backend
	is.Equal(e.backend.StartCount(act.ID), 0)           // not the local one
	is.Equal(gpu.Backend.Spec(act.ID).Path, "/srv/app") // with its path there

	e.repo("/srv/app") // the same path on the Hub's machine
	local, err := e.Register(e.ctx, hub.RegisterRequest{Path: "/srv/app"})
	is.NoErr(err)               // is another workspace
	is.True(local.ID != act.ID) // with its own id

	st, err := e.State(e.ctx, e.ann)
	is.NoErr(err) // the state
	backends := map[string]string{}
	for _, w := range st.Workspaces {
		backends[w.ID] = w.Backend
	}
	is.Equal(backends, map[string]string{act.ID: "ssh:gpu", local.ID: "local"}) // each names where it runs
	hs, err := e.Hosts(e.ctx)
	is.NoErr(err)                 // list
	is.Equal(hs[0].Workspaces, 1) // counting what lives there

	_, err = e.Register(e.ctx, hub.RegisterRequest{Path: "/srv/app", Backend: "ssh:nope"})
	is.Equal(hub.KindOf(err), hub.Invalid) // an unknown host
	_, err = e.Register(e.ctx, hub.RegisterRequest{Path: "/srv/app", Backend: "docker"})
	is.Equal(hub.KindOf(err), hub.Invalid) // an unknown kind of backend
}

func TestCreatingAndBrowsingOnAHostTouchOnlyItsDisk(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.addHost("gpu")
	gpu := e.hosts.Machine("gpu")
	gpu.FS.MkdirAll("/home/gpu/src/old")

	res, err := e.Browse(e.ctx, "ssh:gpu", "")
	is.NoErr(err)                   // browse its home
	is.Equal(res.Path, "/home/gpu") // the login's home there
	res, err = e.Browse(e.ctx, "ssh:gpu", "/home/gpu/src")
	is.NoErr(err)                                            // browse a folder there
	is.True(len(res.Dirs) == 1 && res.Dirs[0].Name == "old") // its entries
	_, err = e.Browse(e.ctx, "", "/home/gpu/src")
	is.Equal(hub.KindOf(err), hub.NotFound) // not on the Hub's machine

	out, err := e.CreateConfigured(e.ctx, hub.CreateConfiguredRequest{Parent: "/home/gpu/src", Backend: "ssh:gpu",
		FolderName: "new", DisplayName: "New"})
	is.NoErr(err)                              // created there
	is.Equal(out.Workspace.Backend, "ssh:gpu") // on the host
	_, err = gpu.FS.Lstat("/home/gpu/src/new/.git")
	is.NoErr(err) // with its repository there
	_, err = e.fs.Lstat("/home/gpu/src/new")
	is.True(err != nil) // and nothing on the Hub's disk
	res, err = e.Browse(e.ctx, "ssh:gpu", "/home/gpu/src")
	is.NoErr(err)                                                               // browse again
	is.True(len(res.Dirs) == 2 && res.Dirs[0].RegisteredID == out.Workspace.ID) // showing the registration
	local, err := e.Browse(e.ctx, "", home)
	is.NoErr(err) // the Hub's own home
	for _, d := range local.Dirs {
		is.True(d.RegisteredID != out.Workspace.ID) // does not show a host's workspace
	}

	p, err := e.CreateFolder(e.ctx, "ssh:gpu", "/home/gpu/src", "empty")
	is.NoErr(err)                      // a folder made there
	is.Equal(p, "/home/gpu/src/empty") // at its path there
	fi, err := gpu.FS.Lstat("/home/gpu/src/empty")
	is.True(err == nil && fi.IsDir()) // on the host's disk
	_, err = e.fs.Lstat("/home/gpu/src/empty")
	is.True(err != nil) // alone
	_, err = e.CreateFolder(e.ctx, "ssh:gpu", "/home/gpu/src", "empty")
	is.Equal(hub.KindOf(err), hub.Conflict) // never twice
	_, err = e.CreateFolder(e.ctx, "ssh:gpu", "/home/gpu/src", "new")
	is.Equal(hub.KindOf(err), hub.Conflict) // nor over a workspace's folder there
	_, err = e.CreateFolder(e.ctx, "ssh:nowhere", "/home/gpu/src", "x")
	is.Equal(hub.KindOf(err), hub.Invalid) // on an unknown machine
}

func TestAHostHoldingWorkspacesCannotBeRemoved(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.addHost("gpu")
	gpu := e.hosts.Machine("gpu")
	gpu.FS.MkdirAll("/srv/app")
	is.NoErr(gpu.Git.Init(e.ctx, "/srv/app"))
	act, err := e.Register(e.ctx, hub.RegisterRequest{Path: "/srv/app", Backend: "ssh:gpu"})
	is.NoErr(err) // registered there

	err = e.RemoveHost(e.ctx, "gpu")
	is.Equal(hub.KindOf(err), hub.Conflict)               // in use
	is.True(strings.Contains(hub.MessageOf(err), act.ID)) // naming what lives there
	_, err = e.ForgetWorkspace(e.ctx, act.ID)
	is.NoErr(err)                                                  // forget it
	is.NoErr(e.RemoveHost(e.ctx, "gpu"))                           // now it goes
	is.Equal(gpu.Closes(), 1)                                      // its connection closed
	is.Equal(hub.KindOf(e.RemoveHost(e.ctx, "gpu")), hub.NotFound) // once
	_, err = e.Register(e.ctx, hub.RegisterRequest{Path: "/srv/app", Backend: "ssh:gpu"})
	is.Equal(hub.KindOf(err), hub.Invalid) // and takes no registration
}

// The worktrees of a workspace on a host are made, registered, started,
// listed and deleted on that host, by its git, and only its workspaces
// are theirs: the same paths on the Hub's machine are another repository.
func TestTheWorktreesOfAWorkspaceOnAHostLiveOnItsMachine(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.addHost("gpu")
	gpu := e.hosts.Machine("gpu")
	gpu.FS.MkdirAll("/srv/app")
	is.NoErr(gpu.Git.Init(e.ctx, "/srv/app"))
	gpu.Git.SetRefs("/srv/app", []string{"main"}, []string{"origin/main"})
	act, err := e.Register(e.ctx, hub.RegisterRequest{Path: "/srv/app", Backend: "ssh:gpu"})
	is.NoErr(err)                          // registered there
	here := e.register(e.repo("/srv/app")) // the same path on the Hub's machine
	e.git.SetRefs("/srv/app", []string{"main"}, nil)

	res, err := e.CreateWorktree(e.ctx, e.ann, hub.CreateWorktreeRequest{SourceWorkspaceID: act.ID, Mode: hub.NewBranch,
		Branch: "feature", Base: &hub.WorktreeBase{Ref: "main"}, Start: true})
	is.NoErr(err)
	is.True(res.Error == nil)                                 // made
	is.True(res.Registered && res.Started)                    // registered and started
	is.Equal(res.Checkout.Path, "/srv/app.worktrees/feature") // beside its main checkout
	is.True(machineIsDir(gpu, "/srv/app.worktrees/feature"))  // on the host's disk
	is.True(!e.isDir("/srv/app.worktrees/feature"))           // not the Hub's
	tree := res.Checkout.WorkspaceID
	is.Equal(backendOf(e, tree), "ssh:gpu") // a workspace of the host
	is.True(gpu.Backend.Running(tree))      // running there
	is.Equal(len(e.journals()), 0)          // nothing pending

	inv := e.inventory(act.ID)
	is.Equal(inv.Status, hub.InventoryReady)       // the host's family reads
	is.Equal(len(inv.Checkouts), 2)                // its main checkout and the tree
	is.Equal(inv.Checkouts[0].WorkspaceID, act.ID) // the host's workspace, not the Hub's at the same path
	local := e.inventory(here)
	is.Equal(len(local.Checkouts), 1)               // the Hub's repository has no tree
	is.True(local.RepositoryID != inv.RepositoryID) // and is another repository

	del, err := e.DeleteWorktree(e.ctx, e.ann, hub.DeleteWorktreeRequest{Confirm: true, Stop: true,
		WorktreeRequest: hub.WorktreeRequest{SourceWorkspaceID: act.ID, Reference: "feature"}})
	is.NoErr(err)
	is.True(del.Error == nil)                                 // deleted
	is.True(!machineIsDir(gpu, "/srv/app.worktrees/feature")) // from the host
	is.True(!gpu.Backend.Running(tree))                       // its session stopped there first
	is.Equal(e.pathOf(tree), "")                              // unregistered
}

func TestAHubWithoutAConnectorRefusesHosts(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	h, err := service.New(service.Config{Password: cheap}, service.Ports{Store: e.store, Clock: e.clock, FS: e.fs, Git: e.git,
		Backend: e.backend, Vault: e.vault, Tools: e.tools, AgentLogins: fakes.NewAgentLogins(e.agent), Pusher: e.pusher})
	is.NoErr(err) // a Hub of one machine
	defer h.Close()
	_, err = h.AddHost(e.ctx, "gpu", "gpu.example.net")
	is.Equal(hub.KindOf(err), hub.Unavailable) // refuses hosts
}

// A session that ends on its own says why, as long as its workspace
// stays stopped: a host that could not be reached, say.
func TestASessionThatEndsOnItsOwnSaysWhy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		e.addHost("gpu")
		gpu := e.hosts.Machine("gpu")
		gpu.FS.MkdirAll("/srv/app")
		is.NoErr(gpu.Git.Init(e.ctx, "/srv/app"))
		act, err := e.Register(e.ctx, hub.RegisterRequest{Path: "/srv/app", Backend: "ssh:gpu", Start: true})
		is.NoErr(err) // running there
		local := e.register(e.repo("/home/ann/a"))
		e.start(local)

		gpu.Backend.CrashBecause(act.ID, "gpu could not be reached for 45 s; the session there ended.")
		e.backend.Crash(local)
		synctest.Wait()
		is.Equal(e.stateOf(act.ID).EndedReason, "gpu could not be reached for 45 s; the session there ended.") // the host's reason
		is.Equal(e.stateOf(local).EndedReason, "The session ended on its own.")                                // or a plain one

		e.start(act.ID)
		is.Equal(e.stateOf(act.ID).EndedReason, "") // gone once it starts again
		_, err = e.StopWorkspace(e.ctx, act.ID)
		is.NoErr(err)                               // a stop asked for
		is.Equal(e.stateOf(act.ID).EndedReason, "") // is no end on its own
	})
}

// A Hub lets its sessions on hosts go when it closes; the next one
// adopts each that is still running, in the background of its start,
// then reaps what is left on the host (a session of a workspace it does
// not know), and only then starts afresh the ones it could not adopt.
// A local session is stopped and started again, as ever.
func TestARestartedHubAdoptsItsSessionsOnHostsReapsTheRestThenStartsTheOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		e.addHost("gpu")
		e.addHost("idle") // holds no workspace: never reached
		gpu := e.hosts.Machine("gpu")
		register := func(p string, start bool) string {
			gpu.FS.MkdirAll(p)
			is.NoErr(gpu.Git.Init(e.ctx, p))
			w, err := e.Register(e.ctx, hub.RegisterRequest{Path: p, Backend: "ssh:gpu", Start: start})
			is.NoErr(err) // registered there
			return w.ID
		}
		a, b, c := register("/srv/a", true), register("/srv/b", false), register("/srv/c", true)
		local := e.register(e.repo("/home/ann/a"))
		e.start(local)
		orphan, err := gpu.Backend.Start(e.ctx, hub.WorkspaceSessionSpec{WorkspaceID: "unknown", Path: "/srv"})
		is.NoErr(err)
		orphan.(hub.SessionDetacher).Detach() // a session of a workspace this Hub does not know

		e.restart()
		is.Equal(gpu.Backend.Detached(), []string{a, c, "unknown"}) // the Hub let its host sessions go, running
		gpu.Backend.EndDetached(c)                                  // and one of them ended meanwhile
		synctest.Wait()
		is.Equal(gpu.Backend.Adoptions(a), 1)                 // the running one is adopted
		is.Equal(gpu.Backend.StartCount(a), 1)                // not started again
		is.Equal(gpu.Reaps(), []int{3})                       // the host reaped once, before any start of this Hub
		is.Equal(gpu.Backend.Detached(), []string(nil))       // the unknown one with it
		is.Equal(gpu.Backend.StartCount(c), 2)                // the one that ended is started afresh
		is.Equal(gpu.Backend.StartCount(b), 0)                // the stopped one stays stopped
		is.True(e.Running(a) && e.Running(c))                 // both run
		is.Equal(e.backend.StartCount(local), 1)              // the local one was started again
		is.Equal(e.hosts.Machine("idle").Reaps(), []int(nil)) // a host without workspaces is left alone

		_, err = e.StopWorkspace(e.ctx, a)
		is.NoErr(err)                                   // an adopted session stops as any other
		is.True(!gpu.Backend.Running(a))                // on the host
		is.Equal(gpu.Backend.Detached(), []string(nil)) // and is not let go
	})
}

// backendOf is the backend of workspace id, "" when it is not registered.
func backendOf(e *env, id string) string {
	for _, w := range e.workspaces() {
		if w.ID == id {
			return w.Backend
		}
	}
	return ""
}
