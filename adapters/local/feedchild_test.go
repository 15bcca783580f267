package local_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/local"
	"github.com/wharfhub/wharf/fakes/agentscript"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

// These tests read feeds of real children; fakes/porttest holds the rest
// of the contract, which TestBackend runs.

func TestDocumentFeedFollowsTheFolder(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	b, _ := newBackend(t, modeServe, local.Options{})
	dir := t.TempDir()
	rs, err := b.Start(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: dir})
	is.NoErr(err) // started
	t.Cleanup(func() { rs.Stop(context.Background()) })
	f, err := rs.OpenFeed(testContext(t), hub.FeedRequest{Topic: hub.TopicDocument,
		Key: hub.DocumentContext{CompareTarget: "base"}.String()})
	is.NoErr(err) // opened
	defer f.Close()
	type update struct {
		Kind      string `json:"kind"`
		Epoch     string `json:"epoch"`
		Discovery *struct {
			Status string `json:"status"`
		} `json:"discovery"`
		Upserts []struct {
			RelativePath string `json:"relativePath"`
		} `json:"upserts"`
	}
	next := func() update {
		t.Helper()
		fr, err := f.Next(testContext(t))
		if err != nil {
			t.Fatalf("next frame: %v", err)
		}
		var u update
		if err := json.Unmarshal(fr.Data, &u); err != nil || fr.Kind != hub.FrameData {
			t.Fatalf("frame %v is no DocumentUpdate: %v", fr.Kind, err)
		}
		return u
	}
	first := next()
	is.Equal(first.Kind, "snapshot") // a snapshot first

	// The feed indexes from its first request: wait until it is ready,
	// then a new file must arrive as a patch of the same epoch.
	for u := first; u.Discovery == nil || u.Discovery.Status != "ready"; u = next() {
	}
	is.NoErr(os.WriteFile(filepath.Join(dir, "new.md"), []byte("# new\n"), 0o600)) // a new file
	for {
		u := next()
		is.Equal(u.Epoch, first.Epoch) // one feed, one epoch
		if len(u.Upserts) > 0 {
			is.Equal(u.Kind, "patch")                     // changes come as patches
			is.Equal(u.Upserts[0].RelativePath, "new.md") // of the new file
			break
		}
	}
}

func TestFeedOfAKilledChildFails(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	b, _ := newBackend(t, modeServe, local.Options{})
	rs := startSession(t, b, "alpha")
	f, err := rs.OpenFeed(testContext(t), hub.FeedRequest{Topic: hub.TopicActivity})
	is.NoErr(err) // opened
	defer f.Close()
	_, err = f.Next(testContext(t))
	is.NoErr(err) // the opening frame

	is.NoErr(syscall.Kill(local.Pid(rs), syscall.SIGKILL)) // kill -9 the child behind the backend's back
	_, err = f.Next(testContext(t))
	is.True(err != nil && !errors.Is(err, context.DeadlineExceeded)) // the feed fails, promptly
	is.Equal(hub.KindOf(err), hub.Unavailable)                       // as unavailable
}

// The notification feed of a real child tells of its agent's requests and
// turns as they happen, and resumes from its cursors.
func TestNotificationFeedOfARealChild(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	b, _ := newBackend(t, modeServe, local.Options{})
	rs := startSession(t, b, "alpha")
	f, err := rs.OpenNotifications(testContext(t), "")
	is.NoErr(err) // opened
	defer f.Close()
	next := func() hub.NotificationFrame {
		t.Helper()
		fr, err := f.Next(testContext(t))
		if err != nil {
			t.Fatalf("next frame: %v", err)
		}
		return fr
	}
	snap := next()
	is.Equal(snap.Type, hub.NoticeSnapshot) // a snapshot first
	is.Equal(snap.Reason, "initial")        // as no cursor was given
	is.Equal(len(snap.Pending), 0)          // of nothing pending
	is.Equal(next().Type, hub.NoticeReady)  // then ready

	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return rs.Dial(ctx) }}}
	base := "http://session/s/alpha/api/chat/conversations"
	call := func(u, body string) []byte {
		t.Helper()
		req, _ := http.NewRequestWithContext(testContext(t), http.MethodPost, u, strings.NewReader(body))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST %s: %s %s", u, resp.Status, b)
		}
		return b
	}
	var created struct{ Conversation struct{ ID string } }
	is.NoErr(json.Unmarshal(call(base, `{"agent":"`+porttest.SessionAgent+`"}`), &created))
	conv := base + "/" + url.PathEscape(created.Conversation.ID)
	call(conv+"/messages", `{"text":"`+agentscript.Permission+`"}`)

	asked := next()
	is.Equal(asked.Type, hub.NoticeEvent)                                // the agent's request is told
	is.Equal(asked.Notification.Kind, hub.NotifyPermissionPending)       // as a permission
	is.Equal(asked.Notification.ConversationID, created.Conversation.ID) // of the conversation
	call(conv+"/permissions/"+url.PathEscape(asked.Notification.SourceID), `{"choiceId":"allow"}`)
	resolved := next()
	is.Equal(resolved.Type, hub.NoticeResolved)               // answered, it is resolved
	is.Equal(resolved.Notification.ID, asked.Notification.ID) // by its identity
	done := next()
	is.Equal(done.Notification.Kind, hub.NotifyTurnCompleted) // then the turn completed

	again, err := rs.OpenNotifications(testContext(t), asked.Cursor)
	is.NoErr(err) // reopened from a cursor
	defer again.Close()
	for _, want := range []hub.NotificationFrame{resolved, done, {Type: hub.NoticeReady, Cursor: done.Cursor}} {
		fr, err := again.Next(testContext(t))
		is.NoErr(err)
		is.Equal(fr, want) // what followed it, then ready
	}
}
