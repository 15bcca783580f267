package opencode_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
	"golang.org/x/sys/unix"

	"github.com/wharfhub/wharf/adapters/agentaccount/opencode"
	"github.com/wharfhub/wharf/hub"
)

// waitGone waits until each process has exited (a pidfd turns readable),
// within a deadline.
func waitGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			continue // already gone
		}
		if err != nil {
			t.Fatalf("pidfd of %d: %v", pid, err)
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 10_000)
		unix.Close(fd)
		if err != nil || n != 1 {
			t.Fatalf("process %d is still there", pid)
		}
	}
}

func TestClosingTheRuntimeLeavesNoProcess(t *testing.T) {
	for _, knob := range []string{"FAKE_OPENCODESERVE_CHILD=1", "FAKE_OPENCODESERVE_IGNORE_TERM=1"} {
		t.Run(knob, func(t *testing.T) {
			is := is.New(t)
			h := newHome(t, "FAKE_OPENCODESERVE_CHILD=1", knob)
			rt := start(t, h)
			before := processesOf(h)
			is.True(slices.Contains(before, h.pid(t, "pid")))   // the server runs
			is.True(slices.Contains(before, h.pid(t, "child"))) // with a child of its own
			rt.Close()
			select {
			case <-rt.Done():
			default:
				t.Fatal("Done is open after Close")
			}
			waitGone(t, before)
			is.Equal(len(processesOf(h)), 0) // nothing of it is left, whether it heeds SIGTERM or not
		})
	}
}

func TestAServerThatDiesOnItsOwnEndsTheRuntimeAndItsLogins(t *testing.T) {
	is := is.New(t)
	h := newHome(t)
	rt := start(t, h)
	f, err := rt.Login(ctx(t), hub.AgentLoginStart{Agent: "opencode", Target: "fakedevice", Method: "0"})
	is.NoErr(err)
	is.NoErr(syscall.Kill(h.pid(t, "pid"), syscall.SIGKILL)) // the server crashes
	select {
	case <-rt.Done(): // the runtime ends
	case <-time.After(30 * time.Second):
		t.Fatal("Done stayed open")
	}
	err = settled(t, f)
	is.Equal(hub.KindOf(err), hub.Unavailable) // its login ends as unavailable
	_, err = rt.Status(ctx(t))
	is.Equal(hub.KindOf(err), hub.Unavailable) // and so does a status
}

func TestTheServerRunsLockedToTheRuntime(t *testing.T) {
	is := is.New(t)
	h := newHome(t)
	start(t, h)
	resp, err := http.Get(h.record("addr") + "/global/health")
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusUnauthorized) // a request without the runtime's password is refused
	pid := h.record("pid")
	env, err := os.ReadFile(filepath.Join("/proc", pid, "environ"))
	is.NoErr(err)
	vars := strings.Split(string(env), "\x00")
	is.True(slices.Contains(vars, "OPENCODE_DISABLE_PROJECT_CONFIG=1")) // no repository's configuration is loaded
	is.True(slices.ContainsFunc(vars, func(v string) bool {
		p, ok := strings.CutPrefix(v, "OPENCODE_SERVER_PASSWORD=")
		return ok && len(p) >= 32
	})) // the password is long and random
	cwd, err := os.Readlink(filepath.Join("/proc", pid, "cwd"))
	is.NoErr(err)
	is.Equal(cwd, "/") // and it runs in no repository
}

func TestAStartThatFailsSaysWhyAndLeavesNoProcess(t *testing.T) {
	bin, err := fakeServer()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		command []string
		env     []string
	}{
		{"a server that never says where it listens", []string{bin}, []string{"FAKE_OPENCODESERVE_SILENT=1"}},
		{"a server that listens elsewhere than on loopback", []string{bin}, []string{"FAKE_OPENCODESERVE_LINE=opencode server listening on http://0.0.0.0:4096"}},
		{"a program that exits at once", []string{"/bin/sh", "-c", "exit 3", "sh"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			h := newHome(t, tt.env...)
			d := opencode.New(opencode.Options{Command: tt.command, Env: h.env})
			c, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			rt, err := d.Start(c)
			is.True(rt == nil)                         // no runtime
			is.Equal(hub.KindOf(err), hub.Unavailable) // the agent is unavailable
			is.True(strings.Contains(hub.MessageOf(err), "OpenCode's login server"))
			is.Equal(len(processesOf(h)), 0) // and nothing is left running
		})
	}
	t.Run("a command that is not installed", func(t *testing.T) {
		is := is.New(t)
		d := opencode.New(opencode.Options{Command: []string{"/nonexistent/opencode"}, Env: newHome(t).env})
		_, err := d.Start(t.Context())
		is.True(errors.Is(err, hub.ErrAgentNotInstalled)) // not installed
		is.Equal(d.Agent(), hub.AgentLoginAgent{ID: "opencode", Name: "OpenCode", Command: "/nonexistent/opencode", LoginCommand: "opencode auth login"})
	})
}
