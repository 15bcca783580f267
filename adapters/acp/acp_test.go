package acp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wharfhub/wharf/adapters/acp"
	"github.com/wharfhub/wharf/fakes/porttest"
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
	dir := t.TempDir()
	fake := filepath.Join(dir, "opencode")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	rt := acp.New(acp.Options{Env: []string{"PATH=" + dir}})
	got := map[string]string{}
	for _, a := range rt.Agents() {
		got[a.ID] = string(a.Availability)
	}
	want := map[string]string{"claude": "not-installed", "codex": "not-installed", "gemini": "not-installed", "opencode": "available"}
	for id, av := range want {
		if got[id] != av {
			t.Errorf("%s: %s, want %s (all: %v)", id, got[id], av, strings.TrimSpace(strings.Repeat(" ", 0)))
		}
	}
}
