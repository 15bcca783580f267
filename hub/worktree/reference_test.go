package worktree_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/worktree"
)

func TestAReferenceIsAWorkspaceACheckoutOrOneBranch(t *testing.T) {
	checkouts := []hub.WorktreeCheckout{
		{CheckoutID: "c-main", Main: true, Branch: "main", Registered: true, WorkspaceID: "app", Path: "/src/app"},
		{CheckoutID: "c-x", Branch: "x", Registered: true, WorkspaceID: "x", Path: "/src/app.worktrees/x"},
		{CheckoutID: "c-y", Branch: "dup", Path: "/src/app.worktrees/y"},
		{CheckoutID: "c-z", Branch: "dup", Path: "/src/app.worktrees/z"},
		{CheckoutID: "x", Branch: "w", Path: "/src/app.worktrees/w"},
	}
	for _, tc := range []struct {
		name, ref, want string
		code            hub.WorktreeCode
	}{
		{"a workspace id", "app", "c-main", ""},
		{"a workspace id before a checkout id", "x", "c-x", ""},
		{"a checkout id", "c-y", "c-y", ""},
		{"a branch of one linked tree", "w", "x", ""},
		{"the main checkout's branch", "main", "", hub.WTNotFound},
		{"a branch of two trees", "dup", "", hub.WTConflict},
		{"a path", "/src/app.worktrees/w", "", hub.WTNotFound},
		{"nothing", "", "", hub.WTNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			c, err := worktree.Resolve(tc.ref, checkouts)
			if tc.code != "" {
				is.Equal(err.Code, tc.code)             // refused
				is.Equal(err.Retry, hub.WTRetryRefresh) // until the inventory is read again
				return
			}
			is.True(err == nil)
			is.Equal(c.CheckoutID, tc.want) // resolved
		})
	}
}
