package child

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/wharfhub/wharf/adapters/child/shells"
	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
)

// The workspace's shells API, under /s/{ID}/api/shells, forwarded by the
// Hub as it is and documented in api/openapi.yaml (tag `shells`):
//
//	GET    shells                        {shells: [ShellInfo]}
//	POST   shells {label?, cols?, rows?} → 201 ShellInfo
//	PATCH  shells/{shellId} {label}      → ShellInfo
//	DELETE shells/{shellId}              → 204
//	GET    shells/{shellId}/attach[?offset=N]   the attach WebSocket (package shells)
//
// Bodies are strict JSON objects of at most maxShellBody bytes (413
// beyond).

// maxShellBody bounds a shells API body.
const maxShellBody = 4 << 10

// Default terminal size of a new shell.
const defaultCols, defaultRows = 80, 24

// shellsAPI serves the shells API of one workspace.
type shellsAPI struct {
	reg    *shells.Registry
	prefix string // /s/{ID}/api/shells
	log    *slog.Logger
}

func (a *shellsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The handler routes the prefix itself and what follows a "/".
	rest := strings.TrimPrefix(r.URL.EscapedPath(), a.prefix)
	var seg []string
	if rest != "" {
		for _, s := range strings.Split(rest[1:], "/") {
			u, err := url.PathUnescape(s)
			if err != nil || u == "" {
				a.fail(w, hub.Errorf(hub.NotFound, "not found"))
				return
			}
			seg = append(seg, u)
		}
	}
	switch {
	case rest == "" && r.Method == http.MethodGet:
		childproto.WriteJSON(w, http.StatusOK, map[string]any{"shells": a.reg.List()})
	case rest == "" && r.Method == http.MethodPost:
		a.create(w, r)
	case len(seg) == 1 && r.Method == http.MethodPatch:
		var body struct {
			Label string `json:"label"`
		}
		if a.decode(w, r, &body) {
			in, err := a.reg.Rename(seg[0], body.Label)
			a.answer(w, http.StatusOK, in, err)
		}
	case len(seg) == 1 && r.Method == http.MethodDelete:
		if err := a.reg.Remove(seg[0]); err != nil {
			a.fail(w, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
	case len(seg) == 2 && seg[1] == "attach" && r.Method == http.MethodGet:
		a.reg.ServeAttach(w, r, seg[0])
	default:
		a.fail(w, hub.Errorf(hub.NotFound, "not found"))
	}
}

// create starts a shell: a label when given (checked), the size or 80x24.
func (a *shellsAPI) create(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Label *string `json:"label"`
		Cols  *int    `json:"cols"`
		Rows  *int    `json:"rows"`
	}
	if !a.decode(w, r, &body) {
		return
	}
	label, cols, rows := "", defaultCols, defaultRows
	if body.Label != nil {
		var err error
		if label, err = shells.CheckLabel(*body.Label); err != nil {
			a.fail(w, err)
			return
		}
	}
	if body.Cols != nil {
		cols = *body.Cols
	}
	if body.Rows != nil {
		rows = *body.Rows
	}
	in, err := a.reg.Create(label, cols, rows)
	a.answer(w, http.StatusCreated, in, err)
}

// decode reads a strict JSON body of at most maxShellBody bytes (413
// beyond), or answers the refusal and returns false.
func (a *shellsAPI) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := httpjson.Decode(r, maxShellBody, true, v); err != nil {
		a.fail(w, err)
		return false
	}
	return true
}

// answer writes v with status, or err's answer.
func (a *shellsAPI) answer(w http.ResponseWriter, status int, v any, err error) {
	if err != nil {
		a.fail(w, err)
		return
	}
	childproto.WriteJSON(w, status, v)
}

// fail answers err: its status and public message; an error without one
// is a 500 whose cause is logged, never sent.
func (a *shellsAPI) fail(w http.ResponseWriter, err error) {
	status := httpjson.StatusOf(err)
	msg := hub.MessageOf(err)
	if msg == "" || status == http.StatusInternalServerError {
		a.log.Error("shells request failed", "err", err)
		status, msg = http.StatusInternalServerError, "internal error"
	}
	childproto.WriteError(w, status, msg)
}
