package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/live"
	"github.com/wharfhub/wharf/hub/service"
)

// Streams are bounded per device session, per user and in total, and the
// distinct upstreams of a workspace too; over a bound the stream or the
// change is refused before anything starts, and closing frees the place.
func TestLiveLimits(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	fsys := fakes.NewFS("/home/ann")
	h, err := service.New(service.Config{Password: cheap,
		LiveLimits: live.Limits{PerDeviceSession: 2, PerUser: 3, Total: 4, UpstreamsPerWorkspace: 2}},
		service.Ports{Store: fakes.NewStore(), Clock: fakes.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)),
			FS: fsys, Git: fakes.NewGit(fsys), Backend: fakes.NewBackend(), Vault: fakes.NewKeyVault(hub.SystemClock{}), Tools: fakes.NewToolProber(), AgentLogins: fakes.NewAgentLogins(), Pusher: fakes.NewPusher()})
	is.NoErr(err)
	defer h.Close()
	fsys.MkdirAll("/home/ann/app")
	_, err = h.Register(ctx, hub.RegisterRequest{Path: "/home/ann/app", Init: true})
	is.NoErr(err) // register app
	ann1 := hub.DeviceSession{User: "ann", Digest: hub.DeviceSessionDigest{1}}
	ann2 := hub.DeviceSession{User: "ann", Digest: hub.DeviceSessionDigest{2}}
	bob := hub.DeviceSession{User: "bob", Digest: hub.DeviceSessionDigest{3}}
	open := func(caller hub.DeviceSession, subs ...hub.Subscription) (*live.Stream, error) {
		return h.OpenLive(ctx, caller, "app", false, subs)
	}
	doc := func(key string) hub.Subscription {
		return hub.Subscription{SubKey: hub.SubKey{Topic: hub.TopicDocument, Key: key, Keyed: true}}
	}

	a, err := open(ann1)
	is.NoErr(err) // ann's first stream on device 1
	_, err = open(ann1)
	is.NoErr(err) // her second
	_, err = open(ann1)
	is.Equal(hub.KindOf(err), hub.RateLimited) // a third on the same device is refused
	is.Equal(hub.MessageOf(err), "too many live streams for this device session (at most 2): close one first")
	_, err = open(ann2)
	is.NoErr(err) // her other device still opens one
	_, err = open(ann2)
	is.Equal(hub.KindOf(err), hub.RateLimited) // but not past her user's 3
	is.Equal(hub.MessageOf(err), "too many live streams for this user (at most 3): close one first")
	b, err := open(bob)
	is.NoErr(err) // bob opens the fourth of the Hub
	_, err = open(hub.DeviceSession{User: "cy", Digest: hub.DeviceSessionDigest{4}})
	is.Equal(hub.KindOf(err), hub.RateLimited) // a fifth is refused to anyone
	is.Equal(hub.MessageOf(err), "the Hub holds as many live streams as it can (4): try again later")

	a.Close()
	b.Close()
	s, err := open(ann1, doc(""), doc("compareTarget=base")) // one context, spelled twice
	is.NoErr(err)                                            // a freed place, and one upstream for the two spellings
	err = h.UpdateLiveSubscriptions(ctx, ann1, s.ID(), hub.SubscriptionChange{Add: []hub.Subscription{doc("compareTarget=last-commit")}})
	is.NoErr(err) // a second context: the workspace's second upstream
	err = h.UpdateLiveSubscriptions(ctx, ann1, s.ID(), hub.SubscriptionChange{Add: []hub.Subscription{doc("scope=file&documentId=/x")}})
	is.Equal(hub.KindOf(err), hub.RateLimited) // a third context is refused
	is.Equal(hub.MessageOf(err), "too many distinct live subscriptions on this workspace (at most 2)")
	_, err = open(bob, doc("compareTarget=last-commit"))
	is.NoErr(err) // another stream shares the existing upstreams
	_, err = open(hub.DeviceSession{User: "cy", Digest: hub.DeviceSessionDigest{5}}, doc("scope=file&documentId=/y"))
	is.Equal(hub.KindOf(err), hub.RateLimited) // a new context is refused at open too
}
