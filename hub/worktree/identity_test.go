package worktree_test

import (
	"hash/fnv"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub/worktree"
)

func TestFNV1aOverCodePointsIsFNV1aOverBytesForASCII(t *testing.T) {
	for _, s := range []string{"", "a", "feature/x", "release-2026.11"} {
		is := is.New(t)
		h := fnv.New32a()
		h.Write([]byte(s))
		is.Equal(worktree.FNV1a(s), h.Sum32()) // the standard FNV-1a, for ASCII
	}
	is := is.New(t)
	is.True(worktree.FNV1a("é") != func() uint32 { h := fnv.New32a(); h.Write([]byte("é")); return h.Sum32() }()) // one step per code point, not per byte
}

func TestAStampGivesALinkedTreeAnIdentityOfItsOwn(t *testing.T) {
	is := is.New(t)
	gitDir := "/src/app/.git/worktrees/x"
	plain := worktree.CheckoutID(gitDir, "")
	one := worktree.CheckoutID(gitDir, "wharf-checkout-0f8fad5b-d9cb-469f-a165-70867728950e")
	two := worktree.CheckoutID(gitDir, "wharf-checkout-7c9e6679-7425-40de-944b-e07fc1f90ae7")
	is.True(plain != one && one != two) // a later tree at the same admin name is another checkout
	is.True(worktree.ValidID(one))      // 32 hex digits
	is.True(worktree.ValidID(worktree.RepositoryID("/src/app/.git")))
	is.True(worktree.ValidStamp("wharf-checkout-0f8fad5b-d9cb-469f-a165-70867728950e"))
	is.True(!worktree.ValidStamp("wharf-checkout-0F8FAD5B-D9CB-469F-A165-70867728950E")) // lower case only
	is.True(!worktree.ValidStamp("uatu-checkout-0f8fad5b-d9cb-469f-a165-70867728950e"))  // ours only
	is.True(!worktree.ValidStamp("wharf-checkout-0f8fad5b-d9cb-469f-a165-70867728950e\n"))
}
