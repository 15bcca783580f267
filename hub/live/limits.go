package live

import "github.com/wharfhub/wharf/hub"

// Every live stream holds a connection and a queue, and every distinct
// subscription of a workspace's session-fed topics holds an upstream (a
// socket to the workspace's child). Unbounded, one client could open
// thousands and exhaust the Hub's descriptors for everyone; bounded, a
// stream or a change that would go over answers 429 before anything
// starts, and the client learns why.

// Limits bound the live stream. A zero field takes its default.
type Limits struct {
	// PerDeviceSession bounds the open streams of one device session
	// (one per browser tab or app window); default 8.
	PerDeviceSession int
	// PerUser bounds the open streams of one user, all devices together;
	// default 32.
	PerUser int
	// Total bounds the open streams of the Hub; default 512.
	Total int
	// UpstreamsPerWorkspace bounds the distinct document contexts,
	// conversations and inventories one workspace's subscribers follow at
	// once (subscribers of the same key share one); default 64.
	UpstreamsPerWorkspace int
}

func (l Limits) withDefaults() Limits {
	if l.PerDeviceSession <= 0 {
		l.PerDeviceSession = 8
	}
	if l.PerUser <= 0 {
		l.PerUser = 32
	}
	if l.Total <= 0 {
		l.Total = 512
	}
	if l.UpstreamsPerWorkspace <= 0 {
		l.UpstreamsPerWorkspace = 64
	}
	return l
}

// admitStreamLocked refuses a new stream of caller over a bound. b.mu is
// held.
func (b *Broker) admitStreamLocked(caller hub.DeviceSession) error {
	lim := b.limits
	if len(b.streams) >= lim.Total {
		return hub.Errorf(hub.RateLimited, "the Hub holds as many live streams as it can (%d): try again later", lim.Total)
	}
	var mine, users int
	for _, s := range b.streams {
		if s.owner == caller.Digest {
			mine++
		}
		if s.user == caller.User {
			users++
		}
	}
	switch {
	case mine >= lim.PerDeviceSession:
		return hub.Errorf(hub.RateLimited, "too many live streams for this device session (at most %d): close one first", lim.PerDeviceSession)
	case users >= lim.PerUser:
		return hub.Errorf(hub.RateLimited, "too many live streams for this user (at most %d): close one first", lim.PerUser)
	}
	return nil
}

// admitUpstreamsLocked refuses subscriptions of workspace ws that would
// need more upstreams than the workspace may have. An upstream that
// exists (lingering ones included) costs nothing more. b.mu is held.
func (b *Broker) admitUpstreamsLocked(ws string, subs []hub.Subscription) error {
	need := map[upKey]bool{}
	for _, sub := range subs {
		if _, ok := b.topic(sub.Topic).(interface{ feed() *feedTopic }); !ok {
			continue
		}
		k := upKey{ws: ws, topic: sub.Topic, key: b.identity(sub.SubKey).Key}
		if b.ups[k] == nil {
			need[k] = true
		}
	}
	if len(need) == 0 {
		return nil
	}
	have := 0
	for k := range b.ups {
		if k.ws == ws {
			have++
		}
	}
	if lim := b.limits.UpstreamsPerWorkspace; have+len(need) > lim {
		return hub.Errorf(hub.RateLimited, "too many distinct live subscriptions on this workspace (at most %d)", lim)
	}
	return nil
}
