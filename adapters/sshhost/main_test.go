package sshhost_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/wharfhub/wharf/adapters/child"
	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/internal/hostop"
	"github.com/wharfhub/wharf/adapters/local"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub/chat"
)

// The test binary is the binary a Host copies to the test's sshd: run
// there as `<binary> session ...` it is a real session child, and as
// `<binary> cat` it copies its stdin to its stdout (for Exec), and as
// `<binary> gpg` and `<binary> git-credential` it is the session's
// signing program and credential helper, as wharf is (the test borrows
// the local backend's, which cmd/wharf runs). The
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
		case hostop.GitCommand: // a clone or fetch on the host, as `wharf hostgit` serves it
			os.Exit(serveGit())
		case "gpg": // the session's signing program, as the projection names it
			os.Exit(local.RunGPG(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
		case "git-credential": // and its credential helper
			if err := local.RunGitCredential(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr, os.Getenv); err != nil {
				fmt.Fprintln(os.Stderr, "wharf git-credential:", err)
				os.Exit(1)
			}
			os.Exit(0)
		default:
			if !strings.HasPrefix(os.Args[1], "-") { // never the test suite, run again by a program it started
				fmt.Fprintln(os.Stderr, "test binary: unknown command", os.Args[1])
				os.Exit(2)
			}
		}
	}
	// A child built with the race detector sleeps a second before it
	// exits cleanly (to catch races at exit): every stop would take
	// longer than the rigs' grace. Races are still reported as they
	// happen, and fail the child's exit.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

// serveGit is `wharf hostgit` with the test's programs first on PATH
// (pathEnv: a stand-in ssh for git) and its test server's certificate
// trusted (caEnv).
func serveGit() int {
	if dir := os.Getenv(pathEnv); dir != "" {
		os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	signal.Ignore(syscall.SIGPIPE)
	git := gitexec.New(gitexec.Options{Env: os.Environ(), CloneCAFile: os.Getenv(caEnv)})
	defer git.Close()
	if err := hostop.ServeLent(context.Background(), os.Stdin, os.Stdout, git); err != nil {
		fmt.Fprintln(os.Stderr, "hostgit:", err)
		return 1
	}
	return 0
}

// pathEnv names a folder the test's clone server puts first on PATH, and
// caEnv a certificate its git trusts for HTTPS; the client sends both
// (SendEnv).
const (
	pathEnv = "WHARF_TEST_PATH"
	caEnv   = "WHARF_TEST_CA"
)

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
