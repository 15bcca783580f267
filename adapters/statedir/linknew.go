package statedir

import "os"

// linkThenRemove links tmp to path, which fails when path exists, then
// removes tmp.
func linkThenRemove(tmp, path string) error {
	if err := os.Link(tmp, path); err != nil {
		return err
	}
	return os.Remove(tmp)
}
