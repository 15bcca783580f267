//go:build unix && !linux

package confine

import "testing"

func resolversUnderTest(testing.TB) map[string]resolver { return map[string]resolver{"walk": walk} }
