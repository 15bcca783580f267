// Package worktree is the rules of the worktree family: a workspace's
// repository holds a main checkout and linked Git worktrees, each of
// which can be a workspace of its own, so that one agent works per task
// on its own branch. It decides; it does nothing. Its functions read the
// records of package hub (worktree.go) and answer a value or a
// *hub.WorktreeError with the contract's (or the earlier system's)
// message. It is pure: no I/O, no clock, no goroutines; it imports hub,
// never the service. The service gathers facts through the GitRunner
// (ports_worktree.go) and the Store, and asks these rules what they mean.
//
// # What is where
//
//	branch.go      CheckBranch: the branch-name rules, in their order
//	dest.go        Destinations: <main>.worktrees/<folder> and its one fallback
//	identity.go    RepositoryID, CheckoutID, stamps
//	localdata.go   Summarize: local data by category, and its fingerprint
//	reference.go   Resolve: a workspace id, a checkout id or a branch
//	preflight.go   Blocker: the one thing that refuses a deletion
//	sanitize.go    Sanitize: messages without paths, secrets or controls
//
// # Never lose work
//
// A tree's files are removed only by a delete whose fingerprint, taken
// from git status's entries, still matches the one the person confirmed
// at the moment before git runs; the branch is never removed. Every
// blocker (a Git lock, a nested worktree, a submodule or nested
// repository, an operation in progress, an identity or ownership the Hub
// cannot prove) refuses, and the acknowledgement of local data never
// overrides one. Ownership is never inferred from a path or a name: a
// tree is the Hub's only when its stamp matches a provenance record.
//
// # Identities
//
// A repository is named by its canonical common directory, a checkout by
// its git directory and, for a linked tree the Hub created or
// registered, the stamp it wrote there: Git reuses administrative names
// (worktrees/<name>) once a tree is pruned, and the stamp goes with the
// tree, so a later tree at the same place gets another identity.
package worktree
