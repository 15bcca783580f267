package confine

import (
	"sync"

	"golang.org/x/sys/unix"
)

// dirFlags open a folder to resolve beneath: O_PATH needs only search
// permission, as the kernel's own lookup does.
const dirFlags = unix.O_PATH | unix.O_DIRECTORY

// maxRaceRetries bounds the retries of an openat2 that a rename raced.
const maxRaceRetries = 32

// beneath is the resolver of Linux 5.6 and later: the kernel resolves rel
// beneath dirfd in one step.
func beneath(dirfd int, rel string, flags int, mode uint32) (int, error) {
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	if flags&unix.O_CREAT != 0 {
		how.Mode = uint64(mode)
	}
	for range maxRaceRetries {
		fd, err := unix.Openat2(dirfd, rel, &how)
		if err != unix.EAGAIN && err != unix.EINTR {
			return fd, err
		}
	}
	return -1, unix.EAGAIN
}

// haveOpenat2 says whether openat2 works here: missing before 5.6, and
// refused (ENOSYS or EPERM) by some seccomp profiles.
var haveOpenat2 = sync.OnceValue(func() bool {
	root, err := unix.Open("/", dirFlags|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(root)
	fd, err := beneath(root, ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
})

func defaultResolver() resolver {
	if haveOpenat2() {
		return beneath
	}
	return walk
}
