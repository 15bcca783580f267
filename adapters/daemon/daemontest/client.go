package daemontest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// NewHTTPClient returns a client for a daemon on loopback: no proxy, no
// cookie jar, no overall timeout (a live stream lasts; bound each request
// with its context). rt, when set, is the transport underneath (a
// Secrets recorder wraps one).
func NewHTTPClient(rt http.RoundTripper) *http.Client {
	if rt == nil {
		rt = &http.Transport{MaxIdleConnsPerHost: 16} // a nil Proxy: never one
	}
	return &http.Client{Transport: rt}
}

// Client talks to a daemon's API as one device session (a bearer).
type Client struct {
	HTTP  *http.Client
	Base  string // the daemon's URL, with its trailing slash
	Token string // the session id, sent as a bearer; "" sends none
}

// At returns a copy of c that talks to the daemon at base: the same device
// session after a restart, which moves the port.
func (c *Client) At(base string) *Client {
	cp := *c
	cp.Base = base
	return &cp
}

// Request sends method on path (relative to Base, no leading slash) with
// in as its JSON body when in is not nil. err is set only when no answer
// arrived (a refused or cut connection, ctx's end); any status is an
// answer. The caller closes the body.
func (c *Client) Request(ctx context.Context, method, path string, in any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+strings.TrimPrefix(path, "/"), body)
	if err != nil {
		return nil, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	return c.HTTP.Do(req)
}

// Do is Request with the answer read: it returns the status and the body,
// and decodes a 2xx body into out when out is not nil. err is set when no
// complete answer arrived, or a 2xx body does not decode into out.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) (int, []byte, error) {
	resp, err := c.Request(ctx, method, path, in)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, b, fmt.Errorf("%s %s: answer %q: %w", method, path, b, err)
		}
	}
	return resp.StatusCode, b, nil
}

// LoginResult is the answer of POST /login.
type LoginResult struct {
	SessionID string `json:"sessionId"`
	User      string `json:"user"`
}

// Login logs user in at the daemon at base and returns a Client bearing
// the new device session, and the answer that issued it (already read),
// so a Secrets scenario can register the id with InResponse(resp). Any
// status but 200 is an error.
func Login(ctx context.Context, hc *http.Client, base, user, password string) (*Client, *http.Response, error) {
	anon := &Client{HTTP: hc, Base: base}
	resp, err := anon.Request(ctx, "POST", "login",
		map[string]string{"name": user, "password": password, "deviceLabel": "daemontest"})
	if err != nil {
		return nil, nil, fmt.Errorf("login: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, resp, fmt.Errorf("login: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, resp, fmt.Errorf("login: %s: %s", resp.Status, b)
	}
	var res LoginResult
	if err := json.Unmarshal(b, &res); err != nil || res.SessionID == "" {
		return nil, resp, fmt.Errorf("login: answer %q: %v", b, err)
	}
	return &Client{HTTP: hc, Base: base, Token: res.SessionID}, resp, nil
}

// HubState is the part of GET /api/hub/state the harnesses read.
type HubState struct {
	Workspaces []Workspace `json:"workspaces"`
}

// Workspace is one workspace of HubState.
type Workspace struct {
	ID           string `json:"id"`
	DisplayName  string `json:"displayName"`
	Path         string `json:"path"`
	Running      bool   `json:"running"`
	Availability string `json:"availability"`
	// ParentID is set on a registered linked worktree: its main
	// checkout's workspace.
	ParentID string `json:"parentId"`
	// Backend is where it lives: "local" or "ssh:<host>".
	Backend string `json:"backend"`
}

// State reads GET /api/hub/state; any status but 200 is an error.
func (c *Client) State(ctx context.Context) (HubState, error) {
	var st HubState
	status, body, err := c.Do(ctx, "GET", "api/hub/state", nil, &st)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("GET /api/hub/state: %d %s", status, body)
	}
	return st, err
}

// BrowseEntry is one directory of a GET /api/hub/browse answer.
type BrowseEntry struct {
	Name         string `json:"name"`
	Git          bool   `json:"git"`
	RegisteredID string `json:"registeredId"`
	DisplayName  string `json:"displayName"`
	Running      bool   `json:"running"`
}

// Browse lists the directories in dir (GET /api/hub/browse); any status
// but 200 is an error.
func (c *Client) Browse(ctx context.Context, dir string) ([]BrowseEntry, error) {
	return c.BrowseOn(ctx, "", dir)
}

// BrowseOn is Browse on the machine backend names ("": the Hub's).
func (c *Client) BrowseOn(ctx context.Context, backend, dir string) ([]BrowseEntry, error) {
	var res struct {
		Dirs []BrowseEntry `json:"dirs"`
	}
	q := "path=" + url.QueryEscape(dir)
	if backend != "" {
		q += "&backend=" + url.QueryEscape(backend)
	}
	status, body, err := c.Do(ctx, "GET", "api/hub/browse?"+q, nil, &res)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("GET /api/hub/browse %s: %d %s", dir, status, body)
	}
	return res.Dirs, err
}
