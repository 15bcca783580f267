package sshhost_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/wharfhub/wharf/adapters/child"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub/chat"
)

// The test binary is the binary a Host copies to the test's sshd: run
// there as `<binary> session ...` it is a real session child, and as
// `<binary> cat` it copies its stdin to its stdout (for Exec). The
// session's mode comes from modeEnv, which the client sends (SendEnv)
// and the server accepts.
const modeEnv = "WHARF_TEST_SSH_MODE"

// modeIgnoreEnd is a session that ignores both the end of its stdin and
// SIGTERM: only a kill ends it.
const modeIgnoreEnd = "ignore-end"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "session":
			os.Exit(testChild(os.Getenv(modeEnv), os.Args[2:]))
		case "cat":
			if _, err := io.Copy(os.Stdout, os.Stdin); err != nil {
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}

func testChild(mode string, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	var stdin io.Reader = os.Stdin
	if mode == modeIgnoreEnd {
		stop()
		signal.Ignore(syscall.SIGTERM)
		ctx, stdin = context.Background(), nil
	}
	if err := child.Run(ctx, args, stdin, os.Stdout, os.Stderr, child.Options{Agents: sessionAgents}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// sessionAgents is the test child's coding agents: porttest.SessionAgent,
// in process, as the Backend suite wants.
func sessionAgents([]string, map[string][]string, chat.TerminalWatcher, *slog.Logger) chat.AgentRuntime {
	rt := fakes.NewAgentRuntime(chat.AgentDescriptor{ID: porttest.SessionAgent, Name: "Scripted", Availability: chat.AgentAvailable})
	rt.SetAutoplay(true)
	return rt
}
