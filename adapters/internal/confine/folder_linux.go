package confine

import "strconv"

// ChdirPath is a path by which a process started before Close enters
// exactly this folder: /proc/self/fd/N, which the new process resolves
// through the descriptor it inherits (os/exec changes folder before it
// closes inherited descriptors), so no rename between the check and the
// start can redirect it.
func (d *Folder) ChdirPath() string {
	return "/proc/self/fd/" + strconv.Itoa(int(d.f.Fd()))
}
