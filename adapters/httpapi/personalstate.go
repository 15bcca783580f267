package httpapi

import (
	"encoding/json"
	"net/http"
	"sort"

	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
)

type personalState struct {
	Version       int     `json:"version"`
	DocumentPath  *string `json:"documentPath,omitempty"`
	Follow        *bool   `json:"follow,omitempty"`
	PreviewMode   *string `json:"previewMode,omitempty"`
	CompareTarget *string `json:"compareTarget,omitempty"`
	FilesFilter   *string `json:"filesFilter,omitempty"`
	LastPtyID     *string `json:"lastPtyId,omitempty"`
}

func toPersonalState(st hub.PersonalState) personalState {
	return personalState{Version: 1, DocumentPath: st.DocumentPath, Follow: st.Follow, PreviewMode: st.PreviewMode,
		CompareTarget: st.CompareTarget, FilesFilter: st.FilesFilter, LastPtyID: st.LastPtyID}
}

func (a *api) handleGetPersonalState(w http.ResponseWriter, r *http.Request, c caller) error {
	st, err := a.personal.PersonalState(r.Context(), c.DeviceSession, r.PathValue("workspaceId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toPersonalState(st))
	return nil
}

// patchField reads one field of a patch: null clears it, a value of the
// right type sets it.
func patchField[T any](raw json.RawMessage, msg string) (hub.Optional[T], error) {
	var v *T
	if err := json.Unmarshal(raw, &v); err != nil {
		return hub.Optional[T]{}, hub.Errorf(hub.Invalid, "%s", msg)
	}
	return hub.Optional[T]{Set: true, Value: v}, nil
}

// decodePatch reads a PersonalStatePatch. Fields are read one by one, so
// an absent field (unchanged) differs from null (cleared), and each bad
// field gets its own message.
func decodePatch(fields map[string]json.RawMessage) (hub.PersonalStatePatch, error) {
	var p hub.PersonalStatePatch
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		raw := fields[k]
		var err error
		switch k {
		case "version":
			var v int
			if json.Unmarshal(raw, &v) != nil || v != 1 {
				err = hub.Errorf(hub.Invalid, "unsupported personal state version")
			}
		case "documentPath":
			p.DocumentPath, err = patchField[string](raw, "documentPath must be a normalized relative path")
		case "follow":
			p.Follow, err = patchField[bool](raw, "follow must be a boolean or null")
		case "previewMode":
			p.PreviewMode, err = patchField[string](raw, "invalid previewMode")
		case "compareTarget":
			p.CompareTarget, err = patchField[string](raw, "invalid compareTarget")
		case "filesFilter":
			p.FilesFilter, err = patchField[string](raw, "invalid filesFilter")
		case "lastPtyId":
			p.LastPtyID, err = patchField[string](raw, "lastPtyId must be a UUID or null")
		default:
			err = hub.Errorf(hub.Invalid, "unknown personal state field: %s", k)
		}
		if err != nil {
			return hub.PersonalStatePatch{}, err
		}
	}
	return p, nil
}

func (a *api) handlePatchPersonalState(w http.ResponseWriter, r *http.Request, c caller) error {
	var fields map[string]json.RawMessage
	if err := httpjson.Decode(r, defaultBodyLimit, false, &fields); err != nil {
		return err
	}
	p, err := decodePatch(fields)
	if err != nil {
		return err
	}
	st, err := a.personal.PatchPersonalState(r.Context(), c.DeviceSession, r.PathValue("workspaceId"), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toPersonalState(st))
	return nil
}

func (a *api) handleActivityViewed(w http.ResponseWriter, r *http.Request, c caller) error {
	if err := a.personal.AcknowledgeActivity(r.Context(), c.DeviceSession, r.PathValue("workspaceId")); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}
