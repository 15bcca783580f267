package codex

import "github.com/wharfhub/wharf/hub"

// PID is the process id of rt's codex, the leader of its process group.
func PID(rt hub.AgentLoginRuntime) int { return rt.(*runtime).pid() }

// WaitBackground waits for the cancels rt sent in the background.
func WaitBackground(rt hub.AgentLoginRuntime) { rt.(*runtime).bg.Wait() }
