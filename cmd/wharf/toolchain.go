package main

import (
	"fmt"
	goversion "go/version"
	"io"
	"runtime"
	"strings"
)

// patchedGo is the Go release whose standard library .ci/vulncheck finds
// free of reachable known vulnerabilities, and which go.mod's toolchain
// line asks for. go.mod's go line is lower on purpose (the lowest release
// the code builds with), so that a Go that may not fetch toolchains
// (GOTOOLCHAIN=local, as Debian and Fedora ship it) still builds Wharf; a
// binary built that way says so at start (TestPatchedGoMatchesCI keeps
// this constant, go.mod and .ci in step).
const patchedGo = "go1.27.3"

// toolchainWarning is the one line serve and version print when the binary
// was built by a Go release older than patchedGo, or "" when it was not.
// A development build of Go (not a release) is not judged.
func toolchainWarning(built string) string {
	release, _, _ := strings.Cut(built, " ") // "go1.26.8 X:nodwarf5" carries its experiments
	if !goversion.IsValid(release) || goversion.Compare(release, patchedGo) >= 0 {
		return ""
	}
	return fmt.Sprintf("wharf: warning: built with %s, older than %s, the Go release checked for known vulnerabilities; "+
		"build with GOTOOLCHAIN=%s (README: The toolchain)", release, patchedGo, patchedGo)
}

// warnToolchain prints toolchainWarning for the running binary, if any.
func warnToolchain(w io.Writer) {
	if line := toolchainWarning(runtime.Version()); line != "" {
		fmt.Fprintln(w, line)
	}
}
