package sshhost_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/sshhost"
	"github.com/wharfhub/wharf/hub"
)

func TestTheFirstStartCopiesTheBinaryAndLaterStartsReuseIt(t *testing.T) {
	is := is.New(t)
	r := newRig(t, nil)
	rs := r.start(t, "alpha")
	is.NoErr(rs.Stop(testContext(t)))
	is.Equal(r.host.Copies(), int64(1)) // the first start copied the binary

	bins, err := filepath.Glob(filepath.Join(r.root, "bin", "*", "wharf"))
	is.NoErr(err)
	is.Equal(len(bins), 1) // to one place, named by its hash
	fi, err := os.Stat(bins[0])
	is.NoErr(err)
	is.Equal(fi.Mode().Perm(), os.FileMode(0o700)) // executable by its owner only
	for _, dir := range []string{r.root + "/bin", filepath.Dir(bins[0])} {
		fi, err := os.Stat(dir)
		is.NoErr(err)
		is.Equal(fi.Mode().Perm(), os.FileMode(0o700)) // in private folders
	}
	leftovers, err := filepath.Glob(filepath.Join(filepath.Dir(bins[0]), ".wharf.*"))
	is.NoErr(err)
	is.Equal(len(leftovers), 0) // and no temporary copy is left

	r.start(t, "beta")
	is.Equal(r.host.Copies(), int64(1)) // a second start reuses it

	again := r.newHost(t) // a Hub restarted: it checks the hash on the host
	_, err = again.Start(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: "gamma", Path: t.TempDir()})
	is.NoErr(err)
	is.Equal(again.Copies(), int64(0)) // and finds the binary there
	before, err := os.Stat(bins[0])
	is.NoErr(err)
	is.True(os.SameFile(fi, before)) // the very same file
}

func TestAStartOverABinaryWithAnotherHashReplacesIt(t *testing.T) {
	is := is.New(t)
	r := newRig(t, nil)
	is.NoErr(r.host.Check(testContext(t)))
	r.start(t, "alpha")
	bins, _ := filepath.Glob(filepath.Join(r.root, "bin", "*", "wharf"))
	is.Equal(len(bins), 1) // the copy
	damaged := bins[0] + ".damaged"
	is.NoErr(os.WriteFile(damaged, []byte("#!/bin/sh\nexit 1\n"), 0o700))
	is.NoErr(os.Rename(damaged, bins[0])) // damaged on the host (the running one keeps its own)

	again := r.newHost(t)
	_, err := again.Start(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: "beta", Path: t.TempDir()})
	is.NoErr(err)                      // a damaged copy is not run
	is.Equal(again.Copies(), int64(1)) // but copied again
}

func TestCheckTellsWhyAHostCannotBeUsed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		arrange func(t *testing.T, r *rig)
		want    string
	}{
		{"a changed host key", func(t *testing.T, r *rig) { r.srv.RotateHostKey(t) },
			"its host key has changed since it was last seen; ssh refuses it"},
		{"an unknown host key", func(t *testing.T, r *rig) {
			empty := filepath.Join(t.TempDir(), "known_hosts")
			if err := os.WriteFile(empty, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			r.opts.SSH = append(r.opts.SSH, "-o", "UserKnownHostsFile="+empty)
			r.host = r.newHost(t)
		}, "its host key is not known; ssh refuses it"},
		{"a refused login", func(t *testing.T, r *rig) {
			r.srv.Authorize(t, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB8XGx7LNZxGm0HW4Yhn0gk1rW4fj1MPj3FF5xAHIf1Q other")
		}, "the login was refused"},
		{"an unreachable host", func(t *testing.T, r *rig) {
			r.opts.SSH = append(r.opts.SSH, "-o", "Port=1")
			r.host = r.newHost(t)
		}, "unreachable"},
		{"another architecture", func(t *testing.T, r *rig) { r.host.Expect("linux", "riscv64") },
			"this Hub is built for linux/riscv64: its sessions cannot run there"},
		{"another system", func(t *testing.T, r *rig) { r.host.Expect("plan9", "amd64") },
			"this Hub is built for plan9/amd64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			r := newRig(t, nil)
			tc.arrange(t, r)
			err := r.host.Check(testContext(t))
			is.Equal(hub.KindOf(err), hub.Unavailable) // refused
			msg := hub.MessageOf(err)
			is.True(strings.HasPrefix(msg, "host build1")) // naming the host
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("message %q, want %q", msg, tc.want)
			}
			for _, leak := range []string{"SHA256:", "@@@", "127.0.0.1", r.client.Config, "Permission denied"} {
				is.True(!strings.Contains(msg, leak)) // and quoting none of ssh's words
			}
			_, err = r.host.Start(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: t.TempDir()})
			is.Equal(hub.MessageOf(err), msg)   // a start is refused alike
			is.Equal(r.host.Copies(), int64(0)) // before anything is copied
			is.Equal(r.host.Live(), int64(0))   // or started
		})
	}
}

func TestNewRefusesWhatSSHCouldMisread(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*sshhost.Options)
	}{
		{"a destination that is an option", func(o *sshhost.Options) { o.Destination = "-oProxyCommand=touch /tmp/x" }},
		{"a destination with a space", func(o *sshhost.Options) { o.Destination = "host -p 1" }},
		{"no destination", func(o *sshhost.Options) { o.Destination = "" }},
		{"a name with capitals", func(o *sshhost.Options) { o.Name = "Build" }},
		{"a name beginning with a hyphen", func(o *sshhost.Options) { o.Name = "-b" }},
		{"a long name", func(o *sshhost.Options) { o.Name = strings.Repeat("b", 33) }},
		{"a runtime folder with a colon", func(o *sshhost.Options) { o.RuntimeDir += "/a:b" }},
		{"a runtime folder too long for sockets", func(o *sshhost.Options) { o.RuntimeDir += "/" + strings.Repeat("r", 100) }},
		{"a remote root with a colon", func(o *sshhost.Options) { o.RemoteRoot = "a:b" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			o := sshhost.Options{Name: "build1", Destination: "user@example", RuntimeDir: shortDir(t)}
			_, err := sshhost.New(o)
			is.NoErr(err) // the options as they were
			tc.change(&o)
			_, err = sshhost.New(o)
			is.True(err != nil) // refused
		})
	}
}
