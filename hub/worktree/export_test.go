package worktree

// FNV1a is fnv1a, for tests.
var FNV1a = fnv1a
