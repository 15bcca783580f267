package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/httpapi"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/live"
	"github.com/wharfhub/wharf/hub/service"
)

// pacedClient is the response writer of a live stream whose client reads
// at the test's pace: while held, each write waits for a token, as a write
// to a client that has read nothing more blocks.
type pacedClient struct {
	header http.Header
	tokens chan struct{}
	mu     sync.Mutex
	held   bool
	got    bytes.Buffer
}

func (c *pacedClient) Header() http.Header              { return c.header }
func (c *pacedClient) WriteHeader(int)                  {}
func (c *pacedClient) Flush()                           {}
func (c *pacedClient) SetWriteDeadline(time.Time) error { return nil }
func (c *pacedClient) hold(held bool)                   { c.mu.Lock(); c.held = held; c.mu.Unlock() }
func (c *pacedClient) received() string                 { c.mu.Lock(); defer c.mu.Unlock(); return c.got.String() }
func (c *pacedClient) count(s string) int               { return strings.Count(c.received(), s) }
func (c *pacedClient) Write(p []byte) (int, error) {
	c.mu.Lock()
	held := c.held
	c.mu.Unlock()
	if held {
		<-c.tokens
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got.Write(p)
}

// pacedStream serves one live stream following the conversation claude:1
// of a running workspace to a pacedClient, over fakes and the fake clock;
// send relays one chat event from the session.
func pacedStream(t *testing.T) (c *pacedClient, clock *fakes.Clock, send func(cursor string, n int), served chan struct{}) {
	t.Helper()
	clock = fakes.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	fsys := fakes.NewFS("/home/ann")
	backend := fakes.NewBackend()
	git := fakes.NewGit(fsys)
	h, err := service.New(service.Config{Password: cheap}, service.Ports{Store: fakes.NewStore(), Clock: clock, FS: fsys, Git: git, Backend: backend, Vault: fakes.NewKeyVault(clock), Tools: fakes.NewToolProber(), AgentLogins: fakes.NewAgentLogins(), Pusher: fakes.NewPusher()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx := t.Context()
	fsys.MkdirAll("/home/ann/app")
	if err := git.Init(ctx, "/home/ann/app"); err != nil {
		t.Fatal(err)
	}
	w, err := h.Register(ctx, hub.RegisterRequest{Path: "/home/ann/app"})
	if err != nil {
		t.Fatal(err)
	}
	backend.SetFeedOpener(w.ID, hub.TopicConversation, func(hub.FeedRequest) ([]hub.FeedFrame, error) { return nil, nil })
	if _, err := h.StartWorkspace(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
	if err := h.AddUser(ctx, "ann", annPassword); err != nil {
		t.Fatal(err)
	}
	login, err := h.Login(ctx, hub.LoginRequest{Name: "ann", Password: annPassword, ClientAddr: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	subs := `[{"topic":"conversation","key":"claude:1","cursor":"c0"}]`
	rctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	req := httptest.NewRequestWithContext(rctx, "GET", "http://127.0.0.1/api/hub/live?ws="+url.QueryEscape(w.ID)+"&subs="+url.QueryEscape(subs), nil)
	req.Header.Set("Authorization", "Bearer "+login.SessionID)
	c = &pacedClient{header: http.Header{}, tokens: make(chan struct{})}
	served = make(chan struct{})
	go func() {
		defer close(served)
		httpapi.NewHandler(httpapi.ServicesOf(h), httpapi.Options{}).ServeHTTP(c, req)
	}()
	synctest.Wait()
	feed, err := backend.WaitFeed(ctx, w.ID, hub.TopicConversation, "claude:1", 1)
	if err != nil {
		t.Fatal(err)
	}
	send = func(cursor string, n int) {
		feed.Send(hub.FeedFrame{Kind: hub.FrameData, Cursor: cursor, Data: []byte(
			`{"generation":"g1","sequence":1,"conversationId":"claude:1","type":"item.text_delta","itemId":"i","delta":"` + strings.Repeat("x", n) + `"}`)})
		synctest.Wait()
	}
	return c, clock, send, served
}

// A client reading a 4 MiB frame slowly, with 2 MiB of events piling up
// behind it, is served for as long as it reads: the transport writes the
// frame piece by piece and reports each piece as progress.
func TestASlowClientReadingABigFrameIsServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		c, clock, send, served := pacedStream(t)
		is.Equal(c.count(`"kind":"ready"`), 1) // the subscription is ready
		c.hold(true)
		send("c1", 4<<20) // the writer takes it, and blocks
		for i := range 20 {
			send("d"+string(rune('a'+i)), 100<<10) // 2 MiB behind it
		}
		for range 6 { // 24 s of a client reading a piece every 4 s
			clock.Advance(4 * time.Second)
			select {
			case c.tokens <- struct{}{}:
			case <-served:
				t.Fatal("the stream of a client that reads ended")
			}
			synctest.Wait()
		}
		c.hold(false)
		close(c.tokens)
		synctest.Wait()
		is.Equal(c.count(`"kind":"data"`), 21) // everything arrived
	})
}

func TestAClientThatStopsReadingIsCutOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		c, clock, send, served := pacedStream(t)
		c.hold(true)
		send("c1", 4<<20)
		for i := range 20 {
			send("d"+string(rune('a'+i)), 100<<10)
		}
		clock.Advance(live.StallTimeout) // no piece read in all that time
		close(c.tokens)                  // let the blocked write return, as its deadline would
		select {
		case <-served:
		case <-time.After(time.Minute):
			t.Fatal("the stream of a stalled client is still served")
		}
		is.Equal(c.count(`"kind":"data"`), 1) // ended within the frame it was on: nothing behind was written
	})
}
