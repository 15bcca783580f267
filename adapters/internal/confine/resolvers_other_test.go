//go:build unix && !linux

package confine

import "testing"

func resolversUnderTest(*testing.T) map[string]resolver { return map[string]resolver{"walk": walk} }
