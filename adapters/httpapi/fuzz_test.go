package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wharfhub/wharf/adapters/httpapi"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// bodyOps are the operations that read a JSON body, with a valid body
// each, as seeds.
var bodyOps = []struct{ method, path, body string }{
	{"POST", "/login", `{"name":"ann","password":"` + annPassword + `","deviceLabel":"fuzz"}`},
	{"POST", "/api/hub/folders/create", `{"parent":"/home/ann/src","name":"new"}`},
	{"POST", "/api/hub/folders/rename", `{"path":"/home/ann/src/new","name":"newer","stop":false}`},
	{"POST", "/api/hub/folders/remove", `{"path":"/home/ann/src/newer","stop":true}`},
	{"POST", "/api/hub/settings/workspace-defaults", `{"defaultWorkspaceParent":"/home/ann/src"}`},
	{"POST", "/api/hub/workspaces", `{"path":"/home/ann/src/app","start":false}`},
	{"POST", "/api/hub/workspaces/configure", `{"path":"/home/ann/src/lib","displayName":"Lib","authentication":[],"init":true}`},
	{"POST", "/api/hub/workspaces/create", `{"parent":"/home/ann/src","folderName":"made","displayName":"Made"}`},
	{"POST", "/api/hub/workspaces/app/display-name", `{"displayName":"App"}`},
	{"PATCH", "/s/app/api/personal-state", `{"documentPath":"a/b.md","follow":true,"previewMode":"diff"}`},
	{"POST", "/api/hub/live/nostream/subscriptions", `{"add":[{"topic":"inventory"}],"remove":[]}`},
}

// Every JSON request decoder, through the real handler over fakes: no
// body, however malformed, gets a 5xx or a panic, and every refusal is the
// contract's error shape. Each answer is also checked against
// api/openapi.yaml.
func FuzzRequestBodies(f *testing.F) {
	for i, op := range bodyOps {
		f.Add(uint8(i), []byte(op.body))
		f.Add(uint8(i), []byte(`{"`+strings.ToUpper(op.body[2:3])+op.body[3:]))
	}
	f.Add(uint8(1), []byte(`{"parent":"/home/ann/src","parent":"/","name":"x"}`))
	f.Add(uint8(7), []byte(`{"parent":"/home/ann","folderName":"a\u202eb","displayName":"x"}`))
	h, bearer := fuzzServer(f)
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		op := bodyOps[int(which)%len(bodyOps)]
		req := httptest.NewRequest(op.method, op.path, bytes.NewReader(body))
		req.Host = "127.0.0.1:4700"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+bearer)
		rec := httptest.NewRecorder()
		served := make(chan string, 1)
		go func() {
			h.ServeHTTP(rec, req)
			resp := rec.Result()
			got, _ := io.ReadAll(resp.Body)
			served <- checkBodyAnswer(req, resp, got)
		}()
		select {
		case msg := <-served:
			if msg != "" {
				t.Fatalf("%s %s %q: %s", op.method, op.path, body, msg)
			}
		case <-time.After(5 * time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("%s %s %q hangs:\n%s", op.method, op.path, body, buf[:runtime.Stack(buf, true)])
		}
	})
}

// checkBodyAnswer says why an answer to a fuzzed body breaks the rules,
// or "".
func checkBodyAnswer(req *http.Request, resp *http.Response, got []byte) string {
	if resp.StatusCode >= 500 {
		return fmt.Sprintf("%d %s", resp.StatusCode, got)
	}
	if resp.StatusCode >= 400 {
		var e map[string]any
		if json.Unmarshal(got, &e) != nil || e["error"] == nil || resp.Header.Get("Cache-Control") != "no-store" {
			return fmt.Sprintf("%d answered %q, not an error body", resp.StatusCode, got)
		}
	}
	if msg := checkResponse(req, resp, got); msg != "" {
		return "contract: " + msg
	}
	return ""
}

// The live stream's query, through the real handler: only 200 (the
// stream opens and ends with its request) or a documented refusal before
// the first byte.
func FuzzLiveQuery(f *testing.F) {
	for _, q := range []string{"ws=app&activity=1&subs=%5B%7B%22topic%22%3A%22document%22%7D%5D", "ws=app&subs=%5B%5D&subs=%5B%5D",
		"ws=app&reconnect=x", "activity=1", "ws=%FF", "ws=app&subs=%5B%7B%22topic%22%3A%22conversation%22%2C%22key%22%3A%22c%22%2C%22cursor%22%3A%22x%22%7D%5D"} {
		f.Add(q)
	}
	h, bearer := fuzzServer(f)
	f.Fuzz(func(t *testing.T, query string) {
		req, err := http.NewRequest("GET", "http://127.0.0.1:4700/api/hub/live?"+query, nil)
		if err != nil {
			return // not a URL a client could send
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req = req.WithContext(ctx)
		req.Header.Set("Authorization", "Bearer "+bearer)
		rec := &endOnOpen{ResponseRecorder: httptest.NewRecorder(), cancel: cancel}
		h.ServeHTTP(rec, req)
		resp := rec.Result()
		got, _ := io.ReadAll(resp.Body)
		switch resp.StatusCode {
		case http.StatusOK:
			if !bytes.HasPrefix(got, []byte(": open\n\nevent: hello\n")) {
				t.Fatalf("%q: a stream that does not open as the contract says: %q", query, got)
			}
		case http.StatusBadRequest, http.StatusNotFound, http.StatusTooManyRequests:
			if msg := checkResponse(req, resp, got); msg != "" {
				t.Fatalf("%q: contract: %s", query, msg)
			}
		default:
			t.Fatalf("%q: %d %s", query, resp.StatusCode, got)
		}
	})
}

// endOnOpen ends a live stream's request as soon as its first bytes are
// written, so the handler returns.
type endOnOpen struct {
	*httptest.ResponseRecorder
	cancel context.CancelFunc
}

func (e *endOnOpen) Write(b []byte) (int, error) {
	defer e.cancel()
	return e.ResponseRecorder.Write(b)
}

func (e *endOnOpen) Flush() {}

// fuzzServer is the handler over fakes with ann logged in and a
// workspace, app, registered; made once per fuzz target.
func fuzzServer(f *testing.F) (http.Handler, string) {
	fsys := fakes.NewFS("/home/ann")
	git := fakes.NewGit(fsys)
	fsys.MkdirAll("/home/ann/src/app")
	fsys.MkdirAll("/home/ann/src/lib")
	ctx := context.Background()
	git.Init(ctx, "/home/ann/src/app")
	h, err := service.New(service.Config{Password: cheap, LoginLimits: service.LoginLimits{PerAddress: 1 << 20, PerName: 1 << 20}},
		service.Ports{Store: fakes.NewStore(), Clock: fakes.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)),
			FS: fsys, Git: git, Backend: fakes.NewBackend(), Vault: fakes.NewKeyVault(hub.SystemClock{}), Tools: fakes.NewToolProber(), AgentLogins: fakes.NewAgentLogins(), Pusher: fakes.NewPusher()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { h.Close() })
	if err := h.AddUser(ctx, "ann", annPassword); err != nil {
		f.Fatal(err)
	}
	if _, err := h.Register(ctx, hub.RegisterRequest{Path: "/home/ann/src/app"}); err != nil {
		f.Fatal(err)
	}
	res, err := h.Login(ctx, hub.LoginRequest{Name: "ann", Password: annPassword, ClientAddr: "127.0.0.1"})
	if err != nil {
		f.Fatal(err)
	}
	return httpapi.NewHandler(httpapi.ServicesOf(h), httpapi.Options{}), res.SessionID
}
