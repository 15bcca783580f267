//go:build unix && !linux

package confine

import "golang.org/x/sys/unix"

// dirFlags open a folder to resolve beneath.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY

func defaultResolver() resolver { return walk }
