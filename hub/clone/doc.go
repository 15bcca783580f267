// Package clone is the rules of the clone-jobs family: a job that clones
// a repository into a new folder, registers it as a workspace and, when
// asked, starts it, while its owner follows Git's output and answers its
// prompts. It decides; it does nothing: no I/O, no clock (callers pass
// now), no goroutines, and it imports hub (and hub/credential's rules),
// never hub/service.
package clone
