package acplogin

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

// Pid is the process (and group) id of rt's agent.
func Pid(rt hub.AgentLoginRuntime) int { return rt.(*runtime).c.cmd.Process.Pid }

// ScriptedAgent builds fakes/acpagent once per test binary.
var ScriptedAgent = sync.OnceValues(func() (string, error) {
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
