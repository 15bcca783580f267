package httpapi

import "github.com/wharfhub/wharf/hub"

// The worktree family's JSON (api/openapi.yaml: WorktreeInventory,
// WorktreeCheckout, WorktreeOperationResult, WorktreePreflightResult).

type inventoryJSON struct {
	RepositoryID      string             `json:"repositoryId"`
	SourceWorkspaceID string             `json:"sourceWorkspaceId"`
	Status            string             `json:"status"`
	Checkouts         []checkoutJSON     `json:"checkouts"`
	Refs              refsJSON           `json:"refs"`
	Error             *worktreeErrorJSON `json:"error,omitempty"`
}

type checkoutJSON struct {
	CheckoutID        string  `json:"checkoutId"`
	RepositoryID      string  `json:"repositoryId"`
	WorkspaceID       string  `json:"workspaceId,omitempty"`
	ParentWorkspaceID string  `json:"parentWorkspaceId,omitempty"`
	Path              string  `json:"path"`
	Branch            *string `json:"branch"`
	Detached          bool    `json:"detached"`
	Main              bool    `json:"main"`
	Ownership         string  `json:"ownership"`
	Availability      string  `json:"availability"`
	Registered        bool    `json:"registered"`
	Running           bool    `json:"running"`
	Locked            bool    `json:"locked"`
	SourceRef         string  `json:"sourceRef,omitempty"`
	Head              string  `json:"head,omitempty"`
}

type refsJSON struct {
	Local     []string `json:"local"`
	Remote    []string `json:"remote"`
	FetchedAt *int64   `json:"fetchedAt"`
}

type worktreeErrorJSON struct {
	Code               string `json:"code"`
	Message            string `json:"message"`
	Retry              string `json:"retry"`
	ConflictCheckoutID string `json:"conflictCheckoutId,omitempty"`
	RetainedCheckoutID string `json:"retainedCheckoutId,omitempty"`
	Phase              string `json:"phase,omitempty"`
}

type resultJSON struct {
	OK               bool               `json:"ok"`
	OperationID      string             `json:"operationId"`
	Kind             string             `json:"kind"`
	Phase            string             `json:"phase,omitempty"`
	Checkout         *checkoutJSON      `json:"checkout,omitempty"`
	Registered       *bool              `json:"registered,omitempty"`
	Started          *bool              `json:"started,omitempty"`
	StartError       *worktreeErrorJSON `json:"startError,omitempty"`
	Error            *worktreeErrorJSON `json:"error,omitempty"`
	RetainedCheckout *checkoutJSON      `json:"retainedCheckout,omitempty"`
}

type preflightJSON struct {
	OK           bool               `json:"ok"`
	Checkout     *checkoutJSON      `json:"checkout,omitempty"`
	RequiresStop *bool              `json:"requiresStop,omitempty"`
	LocalData    map[string]any     `json:"localData,omitempty"`
	Error        *worktreeErrorJSON `json:"error,omitempty"`
}

type localCategoryJSON struct {
	Count  int      `json:"count"`
	Sample []string `json:"sample"`
}

func inventoryOf(inv hub.WorktreeInventory) inventoryJSON {
	out := inventoryJSON{RepositoryID: inv.RepositoryID, SourceWorkspaceID: inv.SourceWorkspaceID, Status: string(inv.Status),
		Checkouts: make([]checkoutJSON, 0, len(inv.Checkouts)), Refs: refsOf(inv.Refs), Error: worktreeErrorOf(inv.Error)}
	for _, c := range inv.Checkouts {
		out.Checkouts = append(out.Checkouts, checkoutOf(c))
	}
	return out
}

func refsOf(r hub.WorktreeRefs) refsJSON {
	out := refsJSON{Local: r.Local, Remote: r.Remote}
	if out.Local == nil {
		out.Local = []string{}
	}
	if out.Remote == nil {
		out.Remote = []string{}
	}
	if r.FetchedAt != 0 {
		at := r.FetchedAt
		out.FetchedAt = &at
	}
	return out
}

func checkoutOf(c hub.WorktreeCheckout) checkoutJSON {
	out := checkoutJSON{CheckoutID: c.CheckoutID, RepositoryID: c.RepositoryID, Path: c.Path, Detached: c.Detached,
		Main: c.Main, Ownership: string(c.Ownership), Availability: string(c.Availability), Registered: c.Registered,
		Running: c.Running, Locked: c.Locked, SourceRef: c.SourceRef, Head: c.Head}
	if c.Registered {
		out.WorkspaceID, out.ParentWorkspaceID = c.WorkspaceID, c.ParentWorkspaceID
	}
	if c.Branch != "" {
		b := c.Branch
		out.Branch = &b
	}
	return out
}

func worktreeErrorOf(e *hub.WorktreeError) *worktreeErrorJSON {
	if e == nil {
		return nil
	}
	return &worktreeErrorJSON{Code: string(e.Code), Message: e.Message, Retry: string(e.Retry),
		ConflictCheckoutID: e.ConflictCheckoutID, RetainedCheckoutID: e.RetainedCheckoutID, Phase: string(e.Phase)}
}

func resultOf(r hub.WorktreeResult) resultJSON {
	out := resultJSON{OK: r.Error == nil, OperationID: r.OperationID, Kind: string(r.Kind), Phase: string(r.Phase),
		Error: worktreeErrorOf(r.Error)}
	if r.Checkout != nil {
		c := checkoutOf(*r.Checkout)
		out.Checkout = &c
	}
	if r.Error == nil {
		registered, started := r.Registered, r.Started
		out.Registered, out.Started, out.StartError = &registered, &started, worktreeErrorOf(r.StartError)
	} else if r.RetainedCheckout != nil {
		c := checkoutOf(*r.RetainedCheckout)
		out.RetainedCheckout = &c
	}
	return out
}

func localDataOf(ld *hub.LocalData) map[string]any {
	if ld == nil {
		return nil
	}
	out := map[string]any{"fingerprint": ld.Fingerprint}
	for cat, s := range ld.Categories {
		out[string(cat)] = localCategoryJSON{Count: s.Count, Sample: s.Sample}
	}
	return out
}
