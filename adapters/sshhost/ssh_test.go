package sshhost_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/sshhost"
)

func TestTheConfiguredSSHCommandCannotUndoTheHardening(t *testing.T) {
	is := is.New(t)
	ssh, err := exec.LookPath("ssh")
	if err != nil {
		t.Skip("ssh is not installed")
	}
	h, err := sshhost.New(sshhost.Options{Name: "build1", Destination: "user@example", RuntimeDir: shortDir(t),
		SSH: []string{ssh, "-F", "/dev/null", "-o", "StrictHostKeyChecking=no", "-o", "BatchMode=no",
			"-o", "ForwardAgent=yes", "-o", "ServerAliveInterval=2"}})
	is.NoErr(err)
	// ssh -G prints the configuration it would use, without connecting.
	out, err := exec.Command(ssh, append(h.SSHArgs(), "-G", "user@example")...).Output()
	is.NoErr(err)
	conf := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(line, " ")
		conf[k] = v
	}
	is.Equal(conf["stricthostkeychecking"], "true") // an unknown or changed host key is refused
	is.Equal(conf["batchmode"], "yes")              // nothing prompts
	is.Equal(conf["forwardagent"], "no")            // the Hub user's agent stays home
	is.Equal(conf["serveraliveinterval"], "2")      // while the keep-alive may be tuned
	is.Equal(conf["serveralivecountmax"], "3")
	is.Equal(conf["controlpath"], h.ControlPath()) // one master, in the private runtime folder
}

func TestAPartitionIsNoticedWithin45SecondsByDefault(t *testing.T) {
	is := is.New(t)
	ssh, err := exec.LookPath("ssh")
	if err != nil {
		t.Skip("ssh is not installed")
	}
	h, err := sshhost.New(sshhost.Options{Name: "build1", Destination: "user@example", RuntimeDir: shortDir(t),
		SSH: []string{ssh, "-F", "/dev/null"}})
	is.NoErr(err)
	out, err := exec.Command(ssh, append(h.SSHArgs(), "-G", "user@example")...).Output()
	is.NoErr(err)
	is.True(strings.Contains(string(out), "\nserveraliveinterval 15\n")) // a keep-alive every 15 s
	is.True(strings.Contains(string(out), "\nserveralivecountmax 3\n"))  // three unanswered end the master: 45 s
}

func TestRemoteArgumentsReachTheScriptAsOneWordEach(t *testing.T) {
	for _, arg := range []string{"plain", "with space", "it's", `"double"`, "$HOME", "`id`", "a\\b", "-n", "*", "'; touch x; '", ""} {
		t.Run(arg, func(t *testing.T) {
			is := is.New(t)
			line := sshhost.RemoteLine(`printf '%s|%s' "$#" "$1"`, arg)
			out, err := exec.Command("/bin/sh", "-c", line).Output() // as the remote user's shell runs it
			is.NoErr(err)
			is.Equal(string(out), "1|"+arg) // one argument, unchanged
		})
	}
}

func TestSSHFailuresAreToldApart(t *testing.T) {
	for _, tc := range []struct{ stderr, want string }{
		{"@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n...\nHost key verification failed.\n", "changed host key"},
		{"No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\nHost key verification failed.\n", "unknown host key"},
		{"root@127.0.0.1: Permission denied (publickey).\n", "login refused"},
		{"ssh: connect to host 127.0.0.1 port 1: Connection refused\n", "unreachable"},
		{"ssh: Could not resolve hostname nowhere.invalid: Name or service not known\n", "unreachable"},
		{"kex_exchange_identification: read: Connection reset by peer\n", "unreachable"},
		{"something else\n", "other"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			is := is.New(t)
			is.Equal(sshhost.Classify(tc.stderr), tc.want) // told apart
		})
	}
}
