package acplogin_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/acplogin"
	"github.com/wharfhub/wharf/hub"
)

// The agents of these tests are shell scripts speaking the wire by hand:
// the SDK's first request (initialize) has id 1, the next (logout) id 2.
const (
	answerInit   = `printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"authMethods":[],"agentCapabilities":{"auth":{"logout":{}}}}}'`
	recordPid    = `echo $$ > "$PIDFILE"`
	waitForStdin = `while read -r line; do :; done`
)

// scripted is a driver whose agent is `sh -c script`, with PIDFILE and
// OUT in its environment (files of dir).
func scripted(t *testing.T, dir string, script ...string) hub.AgentLoginDriver {
	env := append(baseEnv(t), "PIDFILE="+filepath.Join(dir, "pid"), "OUT="+filepath.Join(dir, "out"))
	return acplogin.New(acplogin.Options{ID: "custom", Name: "Custom", Env: env,
		Command: []string{"sh", "-c", strings.Join(script, "\n")}})
}

// scriptPid is the pid the script recorded.
func scriptPid(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestTheAgentsRequestsAreRefusedAndItsNoiseSkipped(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	rt := start(t, scripted(t, dir,
		`read -r line`,
		`echo 'not ACP at all'`,
		`printf '%s\n' '{"jsonrpc":"2.0","method":"session/update","params":{}}'`,
		`printf '%s\n' '{"jsonrpc":"2.0","id":"r1","method":"fs/read_text_file","params":{"sessionId":"s","path":"/etc/passwd"}}'`,
		`read -r reply; printf '%s\n' "$reply" > "$OUT"`,
		answerInit, waitForStdin))
	st, err := rt.Status(ctxFor(t))
	is.NoErr(err)                   // it started all the same
	is.True(st.Capabilities.Logout) // with what initialize said
	b, err := os.ReadFile(filepath.Join(dir, "out"))
	is.NoErr(err)
	is.Equal(strings.TrimSpace(string(b)), `{"jsonrpc":"2.0","id":"r1","error":{"code":-32601,"message":"Method not found"}}`) // the file was refused
}

func TestALineLongerThanTheBoundEndsTheRuntime(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	rt := start(t, scripted(t, dir, recordPid, `read -r line`, answerInit,
		`head -c `+strconv.Itoa(2*acplogin.MaxLine)+` /dev/zero | tr '\0' a`, waitForStdin))
	waitDone(t, rt.Done()) // the runtime ends on its own
	is.True(groupGone(t, scriptPid(t, dir)))
	_, err := rt.Status(ctxFor(t))
	is.Equal(hub.KindOf(err), hub.Unavailable) // and says so
}

func TestAStartThatFailsLeavesNoProcess(t *testing.T) {
	for _, tc := range []struct {
		name, script, says string
		within             time.Duration
	}{
		{"an agent that never answers", `read -r line; ` + waitForStdin, "did not answer in time", time.Second},
		{"an agent that exits", `read -r line; exit 3`, "exited", deadline},
		{"an agent that refuses", `read -r line; printf '%s\n' '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"sk-agent-words"}}'; ` + waitForStdin,
			"did not start its login interface", deadline},
		{"an agent that answers something else", `read -r line; printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":"sk-agent-words"}'; ` + waitForStdin,
			"did not start its login interface", deadline},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(t.Context(), tc.within)
			defer cancel()
			rt, err := scripted(t, dir, recordPid, tc.script).Start(ctx)
			is.True(rt == nil)                                         // nothing started
			is.Equal(hub.KindOf(err), hub.Unavailable)                 // the agent is unavailable
			is.True(strings.Contains(hub.MessageOf(err), tc.says))     // saying why
			is.True(!strings.Contains(hub.MessageOf(err), "sk-agent")) // in its own words, not the agent's
			is.True(groupGone(t, scriptPid(t, dir)))                   // and no process is left
		})
	}
}

func TestALogoutTheAgentRefusesOrDoesNotAnswer(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		kind         hub.Kind
		field, says  string
	}{
		{"refused", `read -r line; printf '%s\n' '{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"sk-agent-words"}}'`,
			hub.Invalid, "credential", "refused to log out"},
		{"not answered", `read -r line`, hub.Unavailable, "", "did not answer in time"},
		{"the agent exits", `read -r line; exit 0`, hub.Unavailable, "", "exited"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			dir := t.TempDir()
			rt := start(t, scripted(t, dir, `read -r line`, answerInit, tc.answer, waitForStdin))
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			err := rt.Logout(ctx, hub.AgentCredentialRef{Target: "custom", Credential: "custom"})
			is.Equal(hub.KindOf(err), tc.kind)                         // the agent's answer
			is.Equal(fieldOf(err), tc.field)                           // naming the login when it refused
			is.True(strings.Contains(hub.MessageOf(err), tc.says))     // in words of ours
			is.True(!strings.Contains(hub.MessageOf(err), "sk-agent")) // not the agent's
		})
	}
}

func TestACrashedAgentsChildrenGoWithIt(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	// The agent leaves a child behind when it dies, as a node wrapper
	// leaves its native agent.
	rt := start(t, scripted(t, dir, `sleep 1000 & echo $! > "$OUT"`, recordPid, `read -r line`, answerInit, waitForStdin))
	is.NoErr(syscall.Kill(scriptPid(t, dir), syscall.SIGKILL))
	waitDone(t, rt.Done()) // the runtime ends
	b, err := os.ReadFile(filepath.Join(dir, "out"))
	is.NoErr(err)
	child, err := strconv.Atoi(strings.TrimSpace(string(b)))
	is.NoErr(err)
	is.True(exits(t, child, deadline)) // and the child with it
}

func TestTheAgentGetsTheRuntimesEnvironmentOnly(t *testing.T) {
	is := is.New(t)
	t.Setenv("WHARF_ACPLOGIN_HUB_ONLY", "sk-hub-secret")
	sh, err := exec.LookPath("sh")
	is.NoErr(err)
	out := filepath.Join(t.TempDir(), "out")
	for _, env := range [][]string{nil, {"HOME=" + t.TempDir()}} {
		d := acplogin.New(acplogin.Options{ID: "custom", Name: "Custom", Env: env, Command: []string{sh, "-c",
			`echo "[$WHARF_ACPLOGIN_HUB_ONLY]" > '` + out + `'; read -r line; ` + answerInit + `; ` + waitForStdin}})
		rt := start(t, d)
		rt.Close()
		b, err := os.ReadFile(out)
		is.NoErr(err)
		is.Equal(string(b), "[]\n") // nothing of the Hub's own environment
	}
}
