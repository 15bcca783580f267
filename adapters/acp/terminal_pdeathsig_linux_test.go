package acp

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
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
