package main

import (
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestToolchainWarningNamesOnlyOlderReleases(t *testing.T) {
	for _, tc := range []struct {
		built string
		warns bool
	}{
		{"go1.26.8", true},
		{"go1.26.8 X:nodwarf5", true},
		{"go1.27.2", true},
		{"go1.27rc1", true},
		{"go1.27.3", false},
		{"go1.27.3 X:boringcrypto", false},
		{"go1.27.10", false},
		{"go1.28", false},
		{"go1.28rc2", false},
		{"devel go1.28-0123456789 Fri Nov 27 07:00:00 2026 +0000", false},
		{"", false},
	} {
		t.Run(tc.built, func(t *testing.T) {
			is := is.New(t)
			line := toolchainWarning(tc.built)
			is.Equal(line != "", tc.warns) // a release older than patchedGo, and only one, is warned about
			if tc.warns {
				is.True(!strings.Contains(line, "\n"))                       // one line
				is.True(strings.Contains(line, strings.Fields(tc.built)[0])) // names the release it was built with
				is.True(strings.Contains(line, "known vulnerabilities"))     // says what is wrong
				is.True(strings.Contains(line, "GOTOOLCHAIN="+patchedGo))    // and how to build with the patched one
			}
		})
	}
}

// TestPatchedGoMatchesCI keeps the release the warning vouches for, the one
// go.mod's toolchain line asks for and the one CI checks with govulncheck
// the same: bumping one without the others fails here.
func TestPatchedGoMatchesCI(t *testing.T) {
	for _, tc := range []struct {
		file, pattern string
	}{
		{"../../go.mod", `(?m)^toolchain (go\S+)$`},
		{"../../.ci/vulncheck", `(?m)^export GOTOOLCHAIN=(go\S+)$`},
		{"../../.ci/run", `(?m)^export GOTOOLCHAIN=(go\S+)$`},
		{"../../justfile", `(?m)^export GOTOOLCHAIN := "(go\S+)"$`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			is := is.New(t)
			b, err := os.ReadFile(tc.file)
			is.NoErr(err) // the file is there
			m := regexp.MustCompile(tc.pattern).FindSubmatch(b)
			is.True(m != nil)                 // the file names a Go release
			is.Equal(string(m[1]), patchedGo) // the same release as patchedGo
		})
	}
}

func TestVersionWarnsOnlyWhenBuiltWithAnOlderGo(t *testing.T) {
	is := is.New(t)
	var stdout, stderr strings.Builder
	is.NoErr(run(testContext(t), []string{"version"}, envOf(nil), nil, &stdout, &stderr)) // version succeeds
	want := toolchainWarning(runtime.Version())
	if want != "" {
		want += "\n"
	}
	is.Equal(stderr.String(), want) // the warning line, exactly when this test binary's Go is older
}
