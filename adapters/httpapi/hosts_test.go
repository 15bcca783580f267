package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

type hostReply struct {
	Name, Destination, Backend, AddedAt string
	Workspaces                          int
}

func TestHostsOverHTTP(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))

	var list struct{ Hosts []hostReply }
	s.do(t, "GET", "/api/hub/hosts", "", auth...).json(t, &list)
	is.Equal(len(list.Hosts), 0) // none at first

	gpu := s.hosts.Machine("gpu")
	gpu.FailCheck(hub.Errorf(hub.Unavailable, "the host key of gpu.example.net changed: check it before trusting it"))
	r := s.do(t, "POST", "/api/hub/hosts", `{"name":"gpu","destination":"ann@gpu.example.net"}`, auth...)
	is.Equal(r.status, http.StatusServiceUnavailable)                                                // the test failed
	is.Equal(r.errorText(t), "the host key of gpu.example.net changed: check it before trusting it") // saying why

	gpu.FailCheck(nil)
	r = s.do(t, "POST", "/api/hub/hosts", `{"name":"gpu","destination":"ann@gpu.example.net"}`, auth...)
	is.Equal(r.status, http.StatusCreated) // added
	var h hostReply
	r.json(t, &h)
	is.Equal(h, hostReply{Name: "gpu", Destination: "ann@gpu.example.net", Backend: "ssh:gpu", AddedAt: "2026-11-22T12:00:00Z"}) // described

	for _, body := range []string{`{"name":"GPU","destination":"x"}`, `{"name":"b","destination":"-oProxyCommand=sh"}`,
		`{"name":"b","destination":"x","extra":1}`, `{"name":"b"}`} {
		is.Equal(s.do(t, "POST", "/api/hub/hosts", body, auth...).status, http.StatusBadRequest) // refused: body
	}
	is.Equal(s.do(t, "POST", "/api/hub/hosts", `{"name":"gpu","destination":"x"}`, auth...).status, http.StatusConflict) // a name taken

	gpu.FS.MkdirAll("/srv/app")
	is.NoErr(gpu.Git.Init(context.Background(), "/srv/app"))
	r = s.do(t, "GET", "/api/hub/browse?backend=ssh:gpu&path=/srv", "", auth...)
	is.Equal(r.status, http.StatusOK)                                                                       // browsed there
	is.True(strings.Contains(string(r.body), `"app"`))                                                      // its folder
	is.Equal(s.do(t, "GET", "/api/hub/browse?backend=ssh:nope", "", auth...).status, http.StatusBadRequest) // an unknown host
	is.Equal(s.do(t, "GET", "/api/hub/browse?backend=", "", auth...).status, http.StatusBadRequest)         // an empty backend
	r = s.do(t, "POST", "/api/hub/folders/create", `{"parent":"/srv","name":"made","backend":"ssh:gpu"}`, auth...)
	is.Equal(r.status, http.StatusOK)                        // a folder made there
	is.True(strings.Contains(string(r.body), `"/srv/made"`)) // at its path there
	_, err := gpu.FS.Lstat("/srv/made")
	is.NoErr(err) // on the host
	is.Equal(s.do(t, "POST", "/api/hub/folders/create", `{"parent":"/srv","name":"x","backend":"ssh:nope"}`, auth...).status,
		http.StatusBadRequest) // not on an unknown one
	r = s.do(t, "POST", "/api/hub/folders/rename", `{"path":"/srv/made","name":"renamed","backend":"ssh:gpu"}`, auth...)
	is.Equal(r.status, http.StatusOK)                           // renamed there
	is.True(strings.Contains(string(r.body), `"/srv/renamed"`)) // to its new path there
	_, err = gpu.FS.Lstat("/srv/renamed")
	is.NoErr(err) // on the host
	is.Equal(s.do(t, "POST", "/api/hub/folders/rename", `{"path":"/srv/renamed","name":"x","backend":"ssh:nope"}`, auth...).status,
		http.StatusBadRequest) // not on an unknown one
	is.Equal(s.do(t, "POST", "/api/hub/folders/remove", `{"path":"/srv/renamed","backend":"ssh:nope"}`, auth...).status,
		http.StatusBadRequest) // nor removed there
	r = s.do(t, "POST", "/api/hub/folders/remove", `{"path":"/srv/renamed","backend":"ssh:gpu"}`, auth...)
	is.Equal(r.status, http.StatusOK) // removed there
	_, err = gpu.FS.Lstat("/srv/renamed")
	is.True(err != nil) // gone from the host

	r = s.do(t, "POST", "/api/hub/workspaces/configure", `{"path":"/srv/app","backend":"ssh:gpu","displayName":"App"}`, auth...)
	is.Equal(r.status, http.StatusOK) // registered there
	var on struct{ Workspace struct{ ID, Backend string } }
	r.json(t, &on)
	is.Equal(on.Workspace.Backend, "ssh:gpu") // on the host
	var st stateReply
	s.do(t, "GET", "/api/hub/state", "", auth...).json(t, &st)
	is.Equal(st.Workspaces[0].Backend, "ssh:gpu") // the state names it

	gpu.FS.MkdirAll("/srv/src")
	r = s.do(t, "POST", "/api/hub/clone-jobs", `{"url":"https://example.com/me/lib.git","dest":"/srv/src","backend":"ssh:gpu"}`, auth...)
	is.Equal(r.status, http.StatusAccepted) // a clone job on the host
	var job struct{ JobID string }
	r.json(t, &job)
	frames := s.cloneFrames(t, job.JobID, "", auth)
	is.True(strings.Contains(frames[len(frames)-1].data, `"target":"/srv/src/lib"`)) // cloned into the folder there
	_, err = gpu.FS.Lstat("/srv/src/lib")
	is.NoErr(err) // on the host
	var made struct{ WorkspaceID string }
	is.NoErr(json.Unmarshal([]byte(frames[len(frames)-1].data), &made))
	is.Equal(s.do(t, "POST", "/api/hub/workspaces/"+made.WorkspaceID+"/forget", "", auth...).status, http.StatusOK) // forgotten again
	for _, body := range []string{`{"url":"https://example.com/me/lib.git","dest":"/srv/src","backend":"ssh:nope"}`,
		`{"url":"https://example.com/me/lib.git","dest":"/srv/src","backend":""}`} {
		is.Equal(s.do(t, "POST", "/api/hub/clone-jobs", body, auth...).status, http.StatusBadRequest) // not on an unknown or empty backend
	}

	is.Equal(s.do(t, "POST", "/api/hub/hosts/gpu/check", "", auth...).status, http.StatusNoContent) // tested again
	is.Equal(s.do(t, "POST", "/api/hub/hosts/nope/check", "", auth...).status, http.StatusNotFound) // unknown
	r = s.do(t, "POST", "/api/hub/hosts/gpu/remove", "", auth...)
	is.Equal(r.status, http.StatusConflict)                                                                        // in use
	is.True(strings.Contains(r.errorText(t), on.Workspace.ID))                                                     // by this workspace
	is.Equal(s.do(t, "POST", "/api/hub/workspaces/"+on.Workspace.ID+"/forget", "", auth...).status, http.StatusOK) // forget it
	is.Equal(s.do(t, "POST", "/api/hub/hosts/gpu/remove", "", auth...).status, http.StatusNoContent)               // removed
	is.Equal(s.do(t, "POST", "/api/hub/hosts/gpu/remove", "", auth...).status, http.StatusNotFound)                // once
	is.Equal(s.do(t, "GET", "/api/hub/hosts", "", auth...).status, http.StatusOK)                                  // listed
	is.Equal(s.do(t, "GET", "/api/hub/hosts", "").status, http.StatusUnauthorized)                                 // only to a user
}
