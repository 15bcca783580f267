package acp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/acp"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub/chat"
)

// scriptedAgent builds fakes/acpagent once per test binary.
var scriptedAgent = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "acpagent-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "acpagent")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/wharfhub/wharf/fakes/acpagent").CombinedOutput()
	if err != nil {
		return "", &buildError{string(out)}
	}
	return bin, nil
})

type buildError struct{ out string }

func (e *buildError) Error() string { return "build acpagent: " + e.out }

func agentBin(t *testing.T) string {
	t.Helper()
	bin, err := scriptedAgent()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// env is the environment of the agents: the test's PATH only.
func env() []string { return []string{"PATH=" + os.Getenv("PATH")} }

func TestMain(m *testing.M) {
	code := m.Run()
	if bin, err := scriptedAgent(); err == nil {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

func TestRuntimeConformance(t *testing.T) {
	porttest.AgentRuntime(t, func(t *testing.T) porttest.AgentHarness {
		rt := acp.New(acp.Options{Env: env(),
			Commands: map[string][]string{"scripted": {agentBin(t), "--state", t.TempDir()}}})
		return porttest.AgentHarness{Runtime: rt, AgentID: "scripted", Dir: t.TempDir()}
	})
}

func TestKnownAgentsAreFoundOnPath(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	fake := filepath.Join(dir, "opencode")
	is.NoErr(os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755)) // an opencode on the PATH
	rt := acp.New(acp.Options{Env: []string{"PATH=" + dir}})
	got := map[string]string{}
	for _, a := range rt.Agents() {
		got[a.ID] = string(a.Availability)
	}
	want := map[string]string{"claude": "not-installed", "codex": "not-installed", "gemini": "not-installed", "opencode": "available"}
	is.Equal(got, want) // found on the agents' PATH, and only there
}

// An agent that stops reading its stdin (and ignores SIGTERM) in the
// middle of a large prompt is still closed: Close does not wait for the
// blocked write, and kills the group after the grace.
func TestCloseAnAgentThatStoppedReading(t *testing.T) {
	is := is.New(t)
	// It answers initialize, reads 200 kB of the prompt, says so with a
	// chunk, then reads nothing more.
	script := `trap '' TERM; read line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"authMethods":[],"agentCapabilities":{"promptCapabilities":{"image":true}}}}'
head -c 200000 >/dev/null
printf '%s\n' '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"stuck"}}}}'
exec sleep 1000`
	rt := acp.New(acp.Options{Env: env(), Commands: map[string][]string{"stuck": {"sh", "-c", script}}})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	stuck := make(chan struct{}, 1)
	conn, err := rt.Start(ctx, "stuck", t.TempDir(), func(string, chat.AgentUpdate) {
		select {
		case stuck <- struct{}{}:
		default:
		}
	})
	is.NoErr(err) // it answers initialize
	prompted := make(chan error, 1)
	go func() {
		_, err := conn.Prompt(ctx, "s", chat.AgentPrompt{Images: []chat.AgentImage{{MimeType: "image/png", Data: make([]byte, 4<<20)}}})
		prompted <- err
	}()
	select {
	case <-stuck: // the prompt is being written, and no longer read
	case <-ctx.Done():
		t.Fatal("the agent never read the prompt")
	}
	closed := make(chan error, 1)
	go func() { closed <- conn.Close() }()
	select {
	case err := <-closed:
		is.NoErr(err) // Close returns
	case <-ctx.Done():
		t.Fatal("Close hung on the agent's full stdin")
	}
	select {
	case err := <-prompted:
		is.True(err != nil) // and the prompt fails
	case <-ctx.Done():
		t.Fatal("the prompt never ended")
	}
}
