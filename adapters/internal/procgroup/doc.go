// Package procgroup starts the programs adapters run for a long time
// (agents, their terminals, agents' login runtimes) each as the leader
// of its own process group, so it is killed as a group, and, on Linux,
// one the kernel kills when the process that started it dies however it
// dies. Reap waits for such a program and lets the caller kill its group
// while the leader's pid is still reserved.
package procgroup
