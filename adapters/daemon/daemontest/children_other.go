//go:build !linux

package daemontest

// awaitChildren returns at once where there is no /proc to find a killed
// daemon's children by: a test there may race their last writes.
func awaitChildren(string) {}
