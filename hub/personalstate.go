package hub

import (
	"context"
	"strings"
)

// PersonalStatePatch changes some fields of a PersonalState. For each field,
// Set false leaves it unchanged; Set true with a nil value clears it; Set
// true with a value replaces it.
type PersonalStatePatch struct {
	DocumentPath  Optional[string]
	Follow        Optional[bool]
	PreviewMode   Optional[string]
	CompareTarget Optional[string]
	FilesFilter   Optional[string]
	LastPtyID     Optional[string]
}

// Optional is one field of a patch.
type Optional[T any] struct {
	Set   bool
	Value *T
}

func (o Optional[T]) apply(dst **T) {
	if !o.Set {
		return
	}
	if o.Value == nil {
		*dst = nil
		return
	}
	v := *o.Value
	*dst = &v
}

// The values the enumerated personal-state fields accept.
var (
	previewModes   = []string{"rendered", "source", "diff"}
	compareTargets = []string{"base", "last-commit"}
	filesFilters   = []string{"all", "changed"}
)

func oneOf(o Optional[string], allowed []string, msg string) error {
	if !o.Set || o.Value == nil {
		return nil
	}
	for _, a := range allowed {
		if *o.Value == a {
			return nil
		}
	}
	return Errorf(Invalid, "%s", msg)
}

// Validate checks every value the patch sets.
func (p PersonalStatePatch) Validate() error {
	if p.DocumentPath.Set && p.DocumentPath.Value != nil && !normalizedRelative(*p.DocumentPath.Value) {
		return Errorf(Invalid, "documentPath must be a normalized relative path")
	}
	if err := oneOf(p.PreviewMode, previewModes, "invalid previewMode"); err != nil {
		return err
	}
	if err := oneOf(p.CompareTarget, compareTargets, "invalid compareTarget"); err != nil {
		return err
	}
	if err := oneOf(p.FilesFilter, filesFilters, "invalid filesFilter"); err != nil {
		return err
	}
	if p.LastPtyID.Set && p.LastPtyID.Value != nil && !lowerUUID(*p.LastPtyID.Value) {
		return Errorf(Invalid, "lastPtyId must be a UUID or null")
	}
	return nil
}

// normalizedRelative reports a relative slash path with no empty, "." or
// ".." segment, no backslash, no NUL and no drive letter.
func normalizedRelative(p string) bool {
	if p == "" || strings.ContainsAny(p, "\\\x00") || p[0] == '/' {
		return false
	}
	if len(p) >= 2 && p[1] == ':' {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// lowerUUID reports a UUID in its canonical lower-case hex form.
func lowerUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
				return false
			}
		}
	}
	return true
}

// PersonalState returns the caller's state in a workspace, running or not.
func (h *Hub) PersonalState(ctx context.Context, caller DeviceSession, id string) (PersonalState, error) {
	var st PersonalState
	err := h.store.View(ctx, func(tx Tx) error {
		if _, err := tx.Workspace(id); err != nil {
			return err
		}
		var err error
		st, err = tx.PersonalState(caller.User, id)
		return err
	})
	if KindOf(err) == NotFound {
		return PersonalState{}, Errorf(NotFound, "unknown workspace: %s", id)
	}
	return st, err
}

// PatchPersonalState applies p to the caller's state in a workspace and
// returns the whole state. The read and the write are one transaction, so
// concurrent patches of different fields both survive.
func (h *Hub) PatchPersonalState(ctx context.Context, caller DeviceSession, id string, p PersonalStatePatch) (PersonalState, error) {
	if err := p.Validate(); err != nil {
		return PersonalState{}, err
	}
	var st PersonalState
	err := h.commit(ctx, func(tx Tx) error {
		if _, err := tx.Workspace(id); err != nil {
			return err
		}
		var err error
		if st, err = tx.PersonalState(caller.User, id); err != nil {
			return err
		}
		p.DocumentPath.apply(&st.DocumentPath)
		p.Follow.apply(&st.Follow)
		p.PreviewMode.apply(&st.PreviewMode)
		p.CompareTarget.apply(&st.CompareTarget)
		p.FilesFilter.apply(&st.FilesFilter)
		p.LastPtyID.apply(&st.LastPtyID)
		return tx.PutPersonalState(caller.User, id, st)
	})
	switch {
	case KindOf(err) == NotFound:
		return PersonalState{}, Errorf(NotFound, "unknown workspace: %s", id)
	case err != nil:
		return PersonalState{}, Wrap(Internal, err, "failed to persist personal state")
	}
	return st, nil
}

// AcknowledgeActivity records that the caller has the workspace's activity
// in view: it clears the workspace's `finished` for that user on every
// device. Acknowledging when nothing unseen has finished changes nothing.
func (h *Hub) AcknowledgeActivity(ctx context.Context, caller DeviceSession, id string) error {
	if _, err := h.workspace(ctx, id); err != nil {
		return err
	}
	h.live.acknowledge(caller.User, id)
	return nil
}
