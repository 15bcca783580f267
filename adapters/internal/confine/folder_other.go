//go:build unix && !linux

package confine

// ChdirPath is the path by which a process enters this folder. Without
// /proc it is the folder's name: a rename racing the start of the process
// could redirect it, the one step of the boundary that is not made
// through a descriptor on these systems.
func (d *Folder) ChdirPath() string { return d.path }
