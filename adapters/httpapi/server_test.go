package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wharfhub/wharf/adapters/httpapi"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// Users every test server starts with.
const (
	annPassword = "correct horse battery"
	bobPassword = "staple tuna kettle"
)

// cheap keeps password hashing fast in tests; the algorithm is the same.
var cheap = service.PasswordParams{Memory: 64, Time: 1, Threads: 1}

// testServer is the whole HTTP stack over fake ports on a real socket.
type testServer struct {
	*httptest.Server
	hub     *service.Hub
	store   hub.Store
	clock   *fakes.Clock
	fs      *fakes.FS
	git     *fakes.Git
	backend *fakes.Backend
	vault   *fakes.KeyVault
	tools   *fakes.ToolProber
	agent   *fakes.FakeAgent // the one agent whose logins the Hub manages
	pusher  *fakes.Pusher
	hosts   *fakes.Hosts // the other machines
	port    string
	client  *http.Client

	logs    syncBuffer
	mu      sync.Mutex
	secrets []string // passwords and session ids that must never be logged
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newServer starts a Hub with the users ann and bob behind the HTTP
// handler. store, when non-nil, replaces the fake store; opts, when given,
// configures the handler (its Logger is replaced).
func newServer(t *testing.T, cfg service.Config, store hub.Store, opts ...httpapi.Options) *testServer {
	t.Helper()
	s := &testServer{clock: fakes.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)), store: store}
	if s.store == nil {
		s.store = fakes.NewStore()
	}
	log := slog.New(slog.NewTextHandler(&s.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if cfg.Password == (service.PasswordParams{}) {
		cfg.Password = cheap
	}
	cfg.Logger = log
	s.fs = fakes.NewFS("/home/ann")
	s.git = fakes.NewGit(s.fs)
	s.backend = fakes.NewBackend()
	s.vault, s.tools = fakes.NewKeyVault(s.clock), fakes.NewToolProber()
	s.agent = fakes.NewFakeAgent("alpha", "Alpha")
	s.pusher = fakes.NewPusher()
	s.hosts = fakes.NewHosts()
	h, err := service.New(cfg, service.Ports{Store: s.store, Clock: s.clock, FS: s.fs, Git: s.git, Backend: s.backend, Vault: s.vault, Tools: s.tools,
		AgentLogins: fakes.NewAgentLogins(s.agent), Pusher: s.pusher, Hosts: s.hosts})
	if err != nil {
		t.Fatal(err)
	}
	s.hub = h
	for name, pw := range map[string]string{"ann": annPassword, "bob": bobPassword} {
		if err := h.AddUser(context.Background(), name, pw); err != nil {
			t.Fatal(err)
		}
		s.secret(pw)
	}
	var o httpapi.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Logger = log
	s.Server = httptest.NewServer(httpapi.NewHandler(httpapi.ServicesOf(h), o))
	_, s.port, _ = net.SplitHostPort(s.Listener.Addr().String())
	s.client = &http.Client{
		Transport:     contractTransport{t: t, base: s.Server.Client().Transport},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}
	t.Cleanup(func() {
		s.Close()
		h.Close()
		logs := s.logs.String()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, secret := range s.secrets {
			if strings.Contains(logs, secret) {
				t.Errorf("the logs hold a secret (%.4s…):\n%s", secret, logs)
			}
		}
	})
	return s
}

// secret records a value that must never appear in the logs.
func (s *testServer) secret(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets = append(s.secrets, v)
}

// behindProxy configures the handler as if a reverse proxy on loopback
// forwarded every request.
var behindProxy = httpapi.Options{TrustedProxies: []netip.Prefix{
	netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"),
}}

// cookieName is the session cookie's name at the test server's port.
func (s *testServer) cookieName() string { return "wharf_hub_" + s.port }

// reply is a response with its body read.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into v, failing the test when it cannot.
func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// errorText is the {error} of an error body.
func (r reply) errorText(t *testing.T) string {
	t.Helper()
	var e struct{ Error string }
	r.json(t, &e)
	return e.Error
}

// do sends a request with body (none when empty) and the headers given as
// name, value pairs.
func (s *testServer) do(t *testing.T, method, path, body string, headers ...string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if strings.EqualFold(headers[i], "Host") {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Add(headers[i], headers[i+1])
	}
	return s.send(t, req)
}

func (s *testServer) send(t *testing.T, req *http.Request) reply {
	t.Helper()
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// sessionOf returns the session id of a successful login reply and records
// it as a secret.
func (s *testServer) sessionOf(t *testing.T, r reply) string {
	t.Helper()
	var res struct{ SessionID string }
	r.json(t, &res)
	if res.SessionID == "" {
		t.Fatalf("no session in %d %s", r.status, r.body)
	}
	s.secret(res.SessionID)
	return res.SessionID
}

// login logs name in and returns the session id.
func (s *testServer) login(t *testing.T, name, password string, headers ...string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"name": name, "password": password, "deviceLabel": "test"})
	r := s.do(t, "POST", "/login", string(body), headers...)
	if r.status != http.StatusOK {
		t.Fatalf("login %s: %d %s", name, r.status, r.body)
	}
	return s.sessionOf(t, r)
}

// bearer returns the header pair of a bearer session.
func bearer(id string) []string { return []string{"Authorization", "Bearer " + id} }

// snapshot describes everything the store holds, to prove a refused request
// changed nothing.
func (s *testServer) snapshot(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	err := s.store.View(context.Background(), func(tx hub.Tx) error {
		users, err := tx.Users()
		if err != nil {
			return err
		}
		for _, u := range users {
			b.WriteString(u.Name + " " + u.PasswordHash + "\n")
			sessions, err := tx.DeviceSessionsOfUser(u.Name)
			if err != nil {
				return err
			}
			for _, x := range sessions {
				b.WriteString("  " + x.Handle + " " + x.RevokedAt.String() + "\n")
			}
		}
		ws, err := tx.Workspaces()
		if err != nil {
			return err
		}
		for _, w := range ws {
			fmt.Fprintf(&b, "workspace %+v\n", w)
			for _, u := range users {
				st, err := tx.PersonalState(u.Name, w.ID)
				if err != nil {
					return err
				}
				fmt.Fprintf(&b, "  %s %s\n", u.Name, describeState(st))
			}
		}
		js, err := tx.Journals()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "journals %d\n", len(js))
		cs, err := tx.Credentials()
		if err != nil {
			return err
		}
		for _, c := range cs {
			sealed, err := tx.CredentialSecret(c.ID)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "credential %+v sealed %x\n", c, sha256.Sum256(sealed))
		}
		as, err := tx.CredentialAssignments()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "assignments %+v\n", as)
		o, err := tx.CredentialToolOverrides()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "overrides %v\n", o)
		devices, err := tx.PushDevices()
		if err != nil {
			return err
		}
		for _, d := range devices {
			fmt.Fprintf(&b, "push device %+v\n", d)
		}
		deliveries, err := tx.PushDeliveries()
		fmt.Fprintf(&b, "push deliveries %+v\n", deliveries)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// describeState spells out a personal state, pointers followed.
func describeState(st hub.PersonalState) string {
	b, _ := json.Marshal(st)
	return string(b)
}
