package hub

import "strings"

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

// ApplyTo changes st as the patch says: each field given is set, or
// cleared when given as null; the others stay.
func (p PersonalStatePatch) ApplyTo(st *PersonalState) {
	p.DocumentPath.apply(&st.DocumentPath)
	p.Follow.apply(&st.Follow)
	p.PreviewMode.apply(&st.PreviewMode)
	p.CompareTarget.apply(&st.CompareTarget)
	p.FilesFilter.apply(&st.FilesFilter)
	p.LastPtyID.apply(&st.LastPtyID)
}

// apply sets *dst as o says, when o was given.
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

// The values the enumerated personal-state fields accept.
var (
	previewModes   = []string{"rendered", "source", "diff"}
	compareTargets = []string{"base", "last-commit"}
	filesFilters   = []string{"all", "changed"}
)
