package ptyflow

import (
	"os"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/procgroup"
	"golang.org/x/sys/unix"
)

// echoOff turns off the terminal's echo (and its echo of a newline), so
// what is typed into it does not come back in the output unless the
// program writes it itself.
func echoOff(tty *os.File) error {
	fd := int(tty.Fd())
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return err
	}
	tio.Lflag &^= unix.ECHO | unix.ECHONL
	return unix.IoctlSetTermios(fd, unix.TCSETS, tio)
}

// awaitGroupGone waits, at most within, until no process of group pgid
// is left but zombies (which run nothing; their parent reaps them).
func awaitGroupGone(pgid int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for procgroup.Running(pgid) {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}
