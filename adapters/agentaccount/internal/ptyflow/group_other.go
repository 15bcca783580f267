//go:build unix && !linux

package ptyflow

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// echoOff turns off the terminal's echo (and its echo of a newline).
func echoOff(tty *os.File) error {
	fd := int(tty.Fd())
	tio, err := unix.IoctlGetTermios(fd, unix.TIOCGETA)
	if err != nil {
		return err
	}
	tio.Lflag &^= unix.ECHO | unix.ECHONL
	return unix.IoctlSetTermios(fd, unix.TIOCSETA, tio)
}

// awaitGroupGone waits, at most within, until group pgid has no process
// left (zombies count here: there is no /proc to tell them apart).
func awaitGroupGone(pgid int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !errors.Is(unix.Kill(-pgid, 0), unix.ESRCH) {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}
