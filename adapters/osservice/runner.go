package osservice

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Runner runs one command of the service manager (systemctl, loginctl,
// launchctl) and returns its standard output. A command that fails
// returns an error naming it with the first line of its standard error;
// a *exec.ExitError is in its chain when the command ran and exited
// non-zero.
type Runner func(ctx context.Context, name string, args ...string) ([]byte, error)

// ExecRunner runs commands found in the directories of pathList (a PATH
// value), each bounded in time (commandTimeout) and in output
// (maxOutput).
func ExecRunner(pathList string) Runner {
	return func(ctx context.Context, name string, args ...string) ([]byte, error) {
		prog, err := lookPath(name, pathList)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, commandTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, prog, args...)
		var out, errOut capped
		cmd.Stdout, cmd.Stderr = &out, &errOut
		cmd.WaitDelay = time.Second
		if err := cmd.Run(); err != nil {
			msg := strings.TrimSpace(errOut.String())
			if i := strings.IndexByte(msg, '\n'); i >= 0 {
				msg = msg[:i]
			}
			if msg != "" {
				return out.Bytes(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
			}
			return out.Bytes(), fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
		}
		return out.Bytes(), nil
	}
}

const (
	// commandTimeout bounds one command: systemctl waits for a start
	// job, which a healthy service finishes in well under this.
	commandTimeout = 90 * time.Second
	// maxOutput bounds what is kept of a command's output.
	maxOutput = 64 << 10
)

// lookPath finds name in pathList as exec.LookPath does in $PATH, so the
// caller's environment, not the process's, decides.
func lookPath(name, pathList string) (string, error) {
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would run whatever the working folder holds
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", name, exec.ErrNotFound)
}

// capped is a buffer that keeps the first maxOutput bytes written.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxOutput - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
