package fakes_test

import (
	"crypto/ecdh"
	"crypto/rand"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

func TestPusher(t *testing.T) {
	porttest.Pusher(t, func(*testing.T) porttest.PushScene { return &pushScene{p: fakes.NewPusher()} })
}

// pushScene scripts the fake as the suite asks: the fake is both the
// pusher and, through its records, the push service.
type pushScene struct {
	p    *fakes.Pusher
	off  *fakes.Pusher // the unconfigured one, once started
	subs atomic.Int64
}

func (s *pushScene) Start(*testing.T) hub.Pusher { return s.p }

func (s *pushScene) StartUnconfigured(*testing.T) hub.Pusher {
	s.off = fakes.NewPusher()
	s.off.SetConfigured(false)
	return s.off
}

func (s *pushScene) Subscribe(t *testing.T) hub.PushSubscription {
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	return hub.PushSubscription{
		Endpoint: "https://push.example.net/p/" + strconv.FormatInt(s.subs.Add(1), 10) + rand.Text(),
		P256DH:   k.PublicKey().Bytes(),
		Auth:     auth,
	}
}

func (s *pushScene) Answer(_ *testing.T, sub hub.PushSubscription, status int, retryAfter time.Duration) {
	s.p.Answer(sub.Endpoint, status, retryAfter)
}

func (s *pushScene) Hang(_ *testing.T, sub hub.PushSubscription) { s.p.Hang(sub.Endpoint) }

func (s *pushScene) Received(_ *testing.T, sub hub.PushSubscription) []hub.PushMessage {
	var got []hub.PushMessage
	pushes := s.p.Pushes()
	if s.off != nil {
		pushes = append(pushes, s.off.Pushes()...)
	}
	for _, p := range pushes {
		if p.Subscription.Endpoint == sub.Endpoint {
			got = append(got, p.Message)
		}
	}
	return got
}

func (s *pushScene) Secrets(*testing.T) []string { return nil }

func TestAFakePushFailsAsScripted(t *testing.T) {
	is := is.New(t)
	p := fakes.NewPusher()
	sub := (&pushScene{}).Subscribe(t)
	boom := hub.Errorf(hub.Unavailable, "the push service could not be reached")
	p.Fail(sub.Endpoint, boom)
	res, err := p.Push(t.Context(), sub, hub.PushMessage{Payload: []byte("hi"), TTL: time.Minute})
	is.True(errors.Is(err, boom))   // the scripted error
	is.Equal(res, hub.PushResult{}) // without an outcome
	pushes := p.Pushes()
	is.Equal(len(pushes), 1)                          // the attempt is recorded
	is.Equal(string(pushes[0].Message.Payload), "hi") // with its payload in the clear
	is.True(errors.Is(pushes[0].Err, boom))           // and its error
}

func TestAFakePushWithAStatusThatIsNoOutcomeFails(t *testing.T) {
	for _, status := range []int{100, 301, 304, 600} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			is := is.New(t)
			p := fakes.NewPusher()
			sub := (&pushScene{}).Subscribe(t)
			p.Answer(sub.Endpoint, status, 0)
			res, err := p.Push(t.Context(), sub, hub.PushMessage{})
			is.Equal(hub.KindOf(err), hub.Unavailable) // an error, as the real one's
			is.Equal(res, hub.PushResult{})            // no outcome
		})
	}
}

func TestTheFakePusherCanBeTurnedOffAndOn(t *testing.T) {
	is := is.New(t)
	p := fakes.NewPusher()
	key := p.PublicKey()
	p.SetConfigured(false)
	is.True(!p.Configured())     // off
	is.Equal(p.PublicKey(), nil) // without a key
	p.SetConfigured(true)
	is.Equal(p.PublicKey(), key) // on again, with the same key
}
