package daemon

import "syscall"

// descriptorLimit returns the process's soft limit on open descriptors,
// or a conservative guess when it cannot be read.
func descriptorLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur == 0 {
		return 1024
	}
	return int(min(r.Cur, 1<<20))
}
