package gitexec

import (
	"os"
	"syscall"
	"time"
)

func stampOf(p string) stamp {
	fi, err := os.Lstat(p)
	if err != nil {
		return stamp{missing: true}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return weakStamp
	}
	return stamp{ino: int64(st.Ino), size: fi.Size(), mtime: fi.ModTime().UnixNano(),
		ctime: time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)).UnixNano()}
}
