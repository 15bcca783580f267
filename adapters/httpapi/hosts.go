package httpapi

import (
	"net/http"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
)

// The hosts family: other machines workspaces live on (a Wharf
// extension; hub/service/hosts.go).

type hubHost struct {
	Name        string    `json:"name"`
	Destination string    `json:"destination"`
	Backend     string    `json:"backend"`
	AddedAt     time.Time `json:"addedAt"`
	Workspaces  int       `json:"workspaces"`
}

type hostList struct {
	Hosts []hubHost `json:"hosts"`
}

type addHostRequest struct {
	Name        string `json:"name"`
	Destination string `json:"destination"`
}

func toHubHost(v hub.HostView) hubHost {
	return hubHost{Name: v.Name, Destination: v.Destination, Backend: v.Backend, AddedAt: v.AddedAt.UTC(), Workspaces: v.Workspaces}
}

func (a *api) handleListHosts(w http.ResponseWriter, r *http.Request, _ caller) error {
	hs, err := a.machines.Hosts(r.Context())
	if err != nil {
		return err
	}
	out := hostList{Hosts: make([]hubHost, len(hs))}
	for i, h := range hs {
		out.Hosts[i] = toHubHost(h)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *api) handleAddHost(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req addHostRequest
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	v, err := a.machines.AddHost(r.Context(), req.Name, req.Destination)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toHubHost(v))
	return nil
}

func (a *api) handleCheckHost(w http.ResponseWriter, r *http.Request, _ caller) error {
	if err := a.machines.CheckHost(r.Context(), r.PathValue("hostName")); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *api) handleRemoveHost(w http.ResponseWriter, r *http.Request, _ caller) error {
	if err := a.machines.RemoveHost(r.Context(), r.PathValue("hostName")); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}
