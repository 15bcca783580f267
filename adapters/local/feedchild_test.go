package local_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/local"
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
