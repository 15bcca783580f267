//go:build !linux

package statedir

// linkNew moves the file at tmp to path unless path exists (then an error
// wrapping os.ErrExist, and tmp stays), with a hard link, which fails
// when path exists.
func linkNew(tmp, path string) error { return linkThenRemove(tmp, path) }
