package acp

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/matryer/is"
	"golang.org/x/sys/unix"
)

const holderEnv = "WHARF_ACP_TEST_HOLD_A_TERMINAL"

// TestHelperHoldingATerminal is the workspace child of
// TestTerminalsDieWithTheWorkspaceChildEvenKilled: it starts a terminal,
// prints its pid and waits to be killed.
func TestHelperHoldingATerminal(t *testing.T) {
	if os.Getenv(holderEnv) != "1" {
		t.Skip("run by TestTerminalsDieWithTheWorkspaceChildEvenKilled")
	}
	c := testConn(t, testRuntime(), t.TempDir(), nil)
	id, err := c.terms.create(acpsdk.CreateTerminalRequest{SessionId: "s1", Command: "sleep", Args: []string{"120"}})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("pid %d\n", c.terms.byID[id].cmd.Process.Pid)
	<-time.After(time.Minute) // killed long before
}

func TestTerminalsDieWithTheWorkspaceChildEvenKilled(t *testing.T) {
	is := is.New(t)
	holder := exec.Command(os.Args[0], "-test.run=^TestHelperHoldingATerminal$")
	holder.Env = append(os.Environ(), holderEnv+"=1")
	out, err := holder.StdoutPipe()
	is.NoErr(err)
	is.NoErr(holder.Start())
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	is.NoErr(err) // the holder started its terminal
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "pid ")))
	is.NoErr(err)
	pidfd, err := unix.PidfdOpen(pid, 0)
	is.NoErr(err) // the terminal runs
	defer unix.Close(pidfd)
	t.Cleanup(func() { _ = unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0) }) // never left behind

	is.NoErr(holder.Process.Kill()) // the child dies without a chance to clean up
	_ = holder.Wait()

	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 10_000)
	is.NoErr(err)
	is.Equal(n, 1) // the terminal's command died with it
}

// A terminal's background children go with it when the connection ends.
func TestATerminalsWholeGroupEndsWithTheConnection(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pid")
	is.NoErr(unix.Mkfifo(fifo, 0o600))
	c := testConn(t, testRuntime(), dir, nil)
	_, err := c.terms.create(acpsdk.CreateTerminalRequest{SessionId: "s1", Command: "sh",
		Args: []string{"-c", "sleep 120 & echo $! > pid; wait"}})
	is.NoErr(err) // started
	read := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // blocks until the shell writes
		read <- string(b)
	}()
	var line string
	select {
	case line = <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the shell never said its child's pid")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	is.NoErr(err) // the background child runs
	pidfd, err := unix.PidfdOpen(pid, 0)
	is.NoErr(err)
	defer unix.Close(pidfd)
	t.Cleanup(func() { _ = unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0) }) // never left behind

	c.end(errors.New("the agent exited"))

	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 10_000)
	is.NoErr(err)
	is.Equal(n, 1) // the background child died with the connection
}
