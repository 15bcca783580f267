package confine

import "testing"

// resolversUnderTest are both ways of resolving, each tested on Linux.
func resolversUnderTest(t testing.TB) map[string]resolver {
	if !haveOpenat2() {
		t.Log("openat2 is unavailable here: only the walk is tested")
		return map[string]resolver{"walk": walk}
	}
	return map[string]resolver{"openat2": beneath, "walk": walk}
}
