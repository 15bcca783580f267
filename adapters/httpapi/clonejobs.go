package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/clone"
)

// CloneJobService is the clone jobs (clonejobs.go).
type CloneJobService interface {
	CreateCloneJob(ctx context.Context, caller hub.DeviceSession, req hub.CreateCloneJobRequest) (string, error)
	ProbeCloneJob(ctx context.Context, caller hub.DeviceSession, id string) error
	CloneJobEvents(ctx context.Context, caller hub.DeviceSession, id string, last int64) ([]hub.CloneEvent, bool, <-chan struct{}, error)
	SendCloneJobInput(ctx context.Context, caller hub.DeviceSession, id, input string) error
	CancelCloneJob(ctx context.Context, caller hub.DeviceSession, id string) (string, error)
}

// cloneKeepAlive is the comment written to an idle clone event stream.
const cloneKeepAlive = 15 * time.Second

// cloneInputLimit bounds an input request's body: the 8 KiB answer,
// JSON-escaped at worst six bytes a byte, and its envelope.
const cloneInputLimit = 6*clone.MaxInputBytes + 1024

func (a *api) handleCreateCloneJob(w http.ResponseWriter, r *http.Request, c caller) error {
	var req struct {
		URL                    string                    `json:"url"`
		Dest                   string                    `json:"dest"`
		FolderName             string                    `json:"folderName"`
		DisplayName            string                    `json:"displayName"`
		CredentialID           *string                   `json:"credentialId"`
		RetainedAuthentication []authenticationSelection `json:"retainedAuthentication"`
		Signing                *string                   `json:"signing"`
		Start                  bool                      `json:"start"`
		RetainAssignment       bool                      `json:"retainAssignment"`
		Backend                *string                   `json:"backend"` // a Wharf extension: absent is local
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	if req.CredentialID != nil && *req.CredentialID == "" {
		return hub.Errorf(hub.Invalid, "credentialId must be a non-empty string")
	}
	if req.Backend != nil && *req.Backend == "" {
		return hub.Errorf(hub.Invalid, "backend must be local or ssh:<host name>")
	}
	id, err := a.clones.CreateCloneJob(r.Context(), c.DeviceSession, hub.CreateCloneJobRequest{URL: req.URL, Dest: req.Dest,
		FolderName: req.FolderName, DisplayName: req.DisplayName, CredentialID: deref(req.CredentialID),
		RetainedAuthentication: toSelections(req.RetainedAuthentication), Signing: deref(req.Signing),
		Start: req.Start, RetainAssignment: req.RetainAssignment, Backend: deref(req.Backend)})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, struct {
		JobID string `json:"jobId"`
	}{id})
	return nil
}

// handleProbeCloneJob answers HEAD: 204 for the caller's job, else the
// status with the JSON content type and no body.
func (a *api) handleProbeCloneJob(w http.ResponseWriter, r *http.Request, c caller) error {
	status := http.StatusNoContent
	if err := a.clones.ProbeCloneJob(r.Context(), c.DeviceSession, r.PathValue("jobId")); err != nil {
		status = httpjson.StatusOf(err)
		w.Header().Set("Content-Type", "application/json")
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	return nil
}

// handleCloneJobEvents streams the job's events after Last-Event-ID,
// then its live ones, until its result.
func (a *api) handleCloneJobEvents(w http.ResponseWriter, r *http.Request, c caller) error {
	id := r.PathValue("jobId")
	last := clone.ParseLastEventID(r.Header.Get("Last-Event-ID"))
	evs, ended, changed, err := a.clones.CloneJobEvents(r.Context(), c.DeviceSession, id, last)
	if err != nil {
		return err // 404 before the stream starts
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	keep := time.NewTicker(cloneKeepAlive)
	defer keep.Stop()
	var buf bytes.Buffer
	for {
		for _, e := range evs {
			writeCloneEvent(&buf, e)
			last = e.ID
		}
		if buf.Len() > 0 {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return nil
			}
			buf.Reset()
			if rc.Flush() != nil {
				return nil
			}
		}
		if ended {
			return nil // the result closes the stream
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-keep.C:
			if _, err := w.Write([]byte(": keepalive\n\n")); err != nil || rc.Flush() != nil {
				return nil
			}
			continue
		case <-changed:
		}
		if evs, ended, changed, err = a.clones.CloneJobEvents(r.Context(), c.DeviceSession, id, last); err != nil {
			return nil // dropped after its retention: the stream just ends
		}
	}
}

// writeCloneEvent writes one event as `id`, `event` and `data` lines.
func writeCloneEvent(buf *bytes.Buffer, e hub.CloneEvent) {
	var name string
	var data any
	switch {
	case e.Result != nil:
		name, data = "result", cloneResult(*e.Result)
	case e.Phase != "":
		name, data = "phase", struct {
			Phase hub.ClonePhase `json:"phase"`
		}{e.Phase}
	default:
		name, data = "output", struct {
			Output string `json:"output"`
		}{e.Output}
	}
	b, _ := json.Marshal(data) // strings and bools only
	buf.WriteString("id: " + strconv.FormatInt(e.ID, 10) + "\nevent: " + name + "\ndata: ")
	buf.Write(b)
	buf.WriteString("\n\n")
}

// cloneResult is a result's data: each status with the fields its
// variant has (api/openapi.yaml, CloneResult).
func cloneResult(r hub.CloneResult) any {
	type result struct {
		Status      hub.CloneStatus `json:"status"`
		Target      string          `json:"target"`
		WorkspaceID string          `json:"workspaceId,omitempty"`
		Running     *bool           `json:"running,omitempty"`
		Error       string          `json:"error,omitempty"`
		Reason      string          `json:"reason,omitempty"`
	}
	out := result{Status: r.Status, Target: r.Target}
	switch r.Status {
	case hub.CloneSucceeded:
		out.WorkspaceID, out.Running = r.WorkspaceID, &r.Running
	case hub.CloneStartFailed:
		out.WorkspaceID, out.Error = r.WorkspaceID, r.Error
	case hub.CloneCancelled, hub.CloneTimedOut:
		out.Reason = r.Reason
	default:
		out.Error = r.Error
		if out.Error == "" {
			out.Error = "the clone failed"
		}
	}
	return out
}

func (a *api) handleCloneJobInput(w http.ResponseWriter, r *http.Request, c caller) error {
	var req struct {
		Input *string `json:"input"`
	}
	if err := httpjson.Decode(r, cloneInputLimit, true, &req); err != nil {
		return err
	}
	if req.Input == nil {
		return hub.Errorf(hub.Invalid, "input is required")
	}
	if err := a.clones.SendCloneJobInput(r.Context(), c.DeviceSession, r.PathValue("jobId"), *req.Input); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Accepted bool `json:"accepted"`
	}{true})
	return nil
}

func (a *api) handleCancelCloneJob(w http.ResponseWriter, r *http.Request, c caller) error {
	status, err := a.clones.CancelCloneJob(r.Context(), c.DeviceSession, r.PathValue("jobId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Status string `json:"status"`
	}{status})
	return nil
}
