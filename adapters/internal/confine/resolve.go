package confine

import (
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// maxLinks bounds the links one resolution follows, as the kernel does.
const maxLinks = 40

// walk is the resolver that needs no openat2: one openat per part from
// dirfd, with O_NOFOLLOW. A part that is a link is read (readlinkat) and
// its target spliced into the parts left, so the kernel never follows a
// link for it; `..` pops the stack of folders walked, never above dirfd.
// The last part is opened with flags and O_NOFOLLOW: a last link is
// ELOOP. A rename racing the walk can change which folder inside is
// reached, never lead out: every step is relative to a descriptor already
// beneath dirfd.
func walk(dirfd int, rel string, flags int, mode uint32) (int, error) {
	parts := splitParts(rel)
	stack := []int{dirfd} // stack[0] is the caller's
	defer func() {
		for _, fd := range stack[1:] {
			unix.Close(fd)
		}
	}()
	links := 0
	for len(parts) > 0 {
		name := parts[0]
		parts = parts[1:]
		cur := stack[len(stack)-1]
		if len(parts) == 0 && name != ".." {
			fd, err := unix.Openat(cur, name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
			if err != nil && err != unix.ENOENT && err != unix.EEXIST && isLink(cur, name) {
				return -1, unix.ELOOP
			}
			return fd, err
		}
		switch name {
		case ".":
			continue
		case "..":
			if len(stack) == 1 {
				return -1, unix.EXDEV
			}
			unix.Close(cur)
			stack = stack[:len(stack)-1]
			continue
		}
		fd, err := unix.Openat(cur, name, dirFlags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			stack = append(stack, fd)
			continue
		}
		if err == unix.ENOENT {
			return -1, err
		}
		target, lerr := readlink(cur, name)
		if lerr != nil {
			return -1, err // not a link: a file where a folder was expected…
		}
		if links++; links > maxLinks {
			return -1, unix.ELOOP
		}
		if filepath.IsAbs(target) {
			return -1, unix.EXDEV
		}
		parts = append(splitParts(target), parts...)
	}
	// The path ended in `..`: open the folder reached.
	return unix.Openat(stack[len(stack)-1], ".", flags|unix.O_CLOEXEC, mode)
}

// splitParts splits a relative path into its parts, dropping empty ones
// and inner "." (a trailing "." stays: it makes the part before it a
// folder to go through, as `docs/.` follows docs).
func splitParts(rel string) []string {
	raw := strings.Split(rel, "/")
	parts := make([]string, 0, len(raw))
	for i, p := range raw {
		if p == "" || (p == "." && i < len(raw)-1) {
			continue
		}
		parts = append(parts, p)
	}
	return parts
}

// isLink says whether name in dirfd is a symbolic link.
func isLink(dirfd int, name string) bool {
	_, err := readlink(dirfd, name)
	return err == nil
}

// readlink reads the link name in dirfd.
func readlink(dirfd int, name string) (string, error) {
	buf := make([]byte, maxPath)
	n, err := unix.Readlinkat(dirfd, name, buf)
	switch {
	case err != nil:
		return "", err
	case n >= len(buf):
		return "", unix.ENAMETOOLONG
	case n == 0:
		return "", unix.ENOENT
	}
	return string(buf[:n]), nil
}
