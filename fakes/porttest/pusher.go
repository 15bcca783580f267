package porttest

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// MaxPushPayload is the largest payload one push carries.
const MaxPushPayload = 3993

// PushScene is a Hub's pusher and the push service it sends to, for the
// Pusher suite. The service decrypts what it receives, as the browser
// would.
type PushScene interface {
	// Start starts the Hub with a contact and returns its pusher. Every
	// start of one scene is the same Hub on the same state.
	Start(t *testing.T) hub.Pusher
	// StartUnconfigured starts the Hub without a contact.
	StartUnconfigured(t *testing.T) hub.Pusher
	// Subscribe returns a new subscription the service knows, whose
	// pushes it answers 201.
	Subscribe(t *testing.T) hub.PushSubscription
	// Answer makes the service answer the pushes to sub with status and,
	// when retryAfter is above zero, a Retry-After of that many seconds.
	Answer(t *testing.T, sub hub.PushSubscription, status int, retryAfter time.Duration)
	// Hang makes the service hold the pushes to sub unanswered, until
	// the pusher gives up or the test ends.
	Hang(t *testing.T, sub hub.PushSubscription)
	// Received returns what the service received for sub so far, oldest
	// first, each with its payload decrypted.
	Received(t *testing.T, sub hub.PushSubscription) []hub.PushMessage
	// Secrets returns, in every form the scene knows them, the Hub's
	// secrets no error may carry: its private key.
	Secrets(t *testing.T) []string
}

// Pusher runs the hub.Pusher contract on the scenes newScene makes, a
// fresh one per subtest.
func Pusher(t *testing.T, newScene func(t *testing.T) PushScene) {
	t.Run("AConfiguredPusherKeepsOnePublicKeyAcrossStarts", func(t *testing.T) {
		is := is.New(t)
		s := newScene(t)
		p := s.Start(t)
		is.True(p.Configured()) // configured with a contact
		k := p.PublicKey()
		_, err := ecdh.P256().NewPublicKey(k)
		is.NoErr(err)        // an uncompressed P-256 point
		is.Equal(len(k), 65) // of 65 bytes
		k[0] ^= 0xff
		is.Equal(p.PublicKey()[0], byte(0x04))          // the slice was the caller's
		is.Equal(s.Start(t).PublicKey(), p.PublicKey()) // the same key on the next start
	})

	t.Run("AnUnconfiguredPusherHasNoKeyAndRefusesToPush", func(t *testing.T) {
		is := is.New(t)
		s := newScene(t)
		p, sub := s.StartUnconfigured(t), s.Subscribe(t)
		is.True(!p.Configured())     // not configured
		is.Equal(p.PublicKey(), nil) // no public key
		res, err := p.Push(t.Context(), sub, hub.PushMessage{Payload: []byte("hello")})
		is.Equal(hub.KindOf(err), hub.Unavailable)             // refused as unavailable
		is.Equal(hub.MessageOf(err), hub.MsgPushNotConfigured) // saying how to configure it
		is.Equal(res, hub.PushResult{})                        // with no outcome
		is.Equal(len(s.Received(t, sub)), 0)                   // nothing sent
	})

	t.Run("AnAcceptedPushArrivesDecryptedWithItsHeaders", func(t *testing.T) {
		is := is.New(t)
		s := newScene(t)
		p, sub := s.Start(t), s.Subscribe(t)
		msgs := []hub.PushMessage{
			{Payload: []byte(`{"version":1,"kind":"turn-completed"}`), TTL: 90*time.Second + 900*time.Millisecond, Urgency: "high", Topic: "wharf-Topic_1"},
			{Payload: []byte("now or never"), TTL: 0},
			{Payload: nil, TTL: time.Hour, Urgency: "very-low"},
		}
		for _, m := range msgs {
			res, err := p.Push(t.Context(), sub, m)
			is.NoErr(err)                                                         // sent
			is.Equal(res, hub.PushResult{Outcome: hub.PushAccepted, Status: 201}) // and accepted
		}
		got := s.Received(t, sub)
		is.Equal(len(got), len(msgs)) // every message arrived
		msgs[0].TTL = 90 * time.Second
		for i := range msgs {
			is.True(bytes.Equal(got[i].Payload, msgs[i].Payload)) // the payload, decrypted
			got[i].Payload, msgs[i].Payload = nil, nil
			is.Equal(got[i], msgs[i]) // with its TTL in whole seconds, its urgency and topic
		}
	})

	t.Run("EachAnswerOfThePushServiceMapsToItsOutcome", func(t *testing.T) {
		for _, c := range []struct {
			name       string
			status     int
			retryAfter time.Duration
			want       hub.PushResult
		}{
			{"200IsAccepted", 200, 0, hub.PushResult{Outcome: hub.PushAccepted, Status: 200}},
			{"202IsAccepted", 202, 0, hub.PushResult{Outcome: hub.PushAccepted, Status: 202}},
			{"404IsGone", 404, 0, hub.PushResult{Outcome: hub.PushGone, Status: 404}},
			{"410IsGoneWhateverItsRetryAfter", 410, 30 * time.Second, hub.PushResult{Outcome: hub.PushGone, Status: 410}},
			{"429IsRetryAfterItsDelay", 429, 30 * time.Second, hub.PushResult{Outcome: hub.PushRetry, Status: 429, RetryAfter: 30 * time.Second}},
			{"429WithoutRetryAfterIsRetry", 429, 0, hub.PushResult{Outcome: hub.PushRetry, Status: 429}},
			{"500IsRetry", 500, 0, hub.PushResult{Outcome: hub.PushRetry, Status: 500}},
			{"503RetryAfterIsCappedAt300s", 503, 2 * time.Hour, hub.PushResult{Outcome: hub.PushRetry, Status: 503, RetryAfter: 300 * time.Second}},
			{"400IsRejected", 400, 0, hub.PushResult{Outcome: hub.PushRejected, Status: 400}},
			{"403IsRejected", 403, 0, hub.PushResult{Outcome: hub.PushRejected, Status: 403}},
			{"413IsRejected", 413, 5 * time.Second, hub.PushResult{Outcome: hub.PushRejected, Status: 413}},
		} {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				s := newScene(t)
				p, sub := s.Start(t), s.Subscribe(t)
				s.Answer(t, sub, c.status, c.retryAfter)
				res, err := p.Push(t.Context(), sub, hub.PushMessage{Payload: []byte("x"), TTL: time.Minute})
				is.NoErr(err)         // an answer is an outcome, not an error
				is.Equal(res, c.want) // mapped as the contract says
			})
		}
	})

	t.Run("APayloadOfAtMost3993BytesIsSentAndALargerOneRefused", func(t *testing.T) {
		is := is.New(t)
		s := newScene(t)
		p, sub := s.Start(t), s.Subscribe(t)
		full := bytes.Repeat([]byte{0xa5}, MaxPushPayload)
		res, err := p.Push(t.Context(), sub, hub.PushMessage{Payload: full})
		is.NoErr(err)                                 // the largest payload is sent
		is.Equal(res.Outcome, hub.PushAccepted)       // and accepted
		is.Equal(s.Received(t, sub)[0].Payload, full) // whole
		_, err = p.Push(t.Context(), sub, hub.PushMessage{Payload: append(full, 0)})
		is.Equal(hub.KindOf(err), hub.Invalid) // one byte more is refused
		is.Equal(len(s.Received(t, sub)), 1)   // and not sent
	})

	t.Run("AnUnusableSubscriptionOrMessageIsInvalidAndNothingIsSent", func(t *testing.T) {
		for _, c := range []struct {
			name string
			edit func(*hub.PushSubscription, *hub.PushMessage)
		}{
			{"AnHTTPEndpoint", func(s *hub.PushSubscription, _ *hub.PushMessage) {
				s.Endpoint = "http" + strings.TrimPrefix(s.Endpoint, "https")
			}},
			{"AnEndpointWithAUser", func(s *hub.PushSubscription, _ *hub.PushMessage) {
				s.Endpoint = strings.Replace(s.Endpoint, "https://", "https://user:pw@", 1)
			}},
			{"ANonURLEndpoint", func(s *hub.PushSubscription, _ *hub.PushMessage) { s.Endpoint = "https://%zz/" + s.Endpoint }},
			{"AShortP256DH", func(s *hub.PushSubscription, _ *hub.PushMessage) { s.P256DH = s.P256DH[:64] }},
			{"AP256DHOffTheCurve", func(s *hub.PushSubscription, _ *hub.PushMessage) { s.P256DH[64] ^= 1 }},
			{"AShortAuth", func(s *hub.PushSubscription, _ *hub.PushMessage) { s.Auth = s.Auth[:15] }},
			{"ANegativeTTL", func(_ *hub.PushSubscription, m *hub.PushMessage) { m.TTL = -time.Second }},
			{"AnUnknownUrgency", func(_ *hub.PushSubscription, m *hub.PushMessage) { m.Urgency = "urgent" }},
			{"ATopicOf33Characters", func(_ *hub.PushSubscription, m *hub.PushMessage) { m.Topic = strings.Repeat("t", 33) }},
			{"ATopicWithAPlus", func(_ *hub.PushSubscription, m *hub.PushMessage) { m.Topic = "a+b" }},
		} {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				s := newScene(t)
				p, sub := s.Start(t), s.Subscribe(t)
				bad, msg := sub, hub.PushMessage{Payload: []byte("x"), TTL: time.Minute}
				bad.P256DH, bad.Auth = bytes.Clone(sub.P256DH), bytes.Clone(sub.Auth)
				c.edit(&bad, &msg)
				res, err := p.Push(t.Context(), bad, msg)
				is.Equal(hub.KindOf(err), hub.Invalid) // refused as invalid
				is.Equal(res, hub.PushResult{})        // with no outcome
				is.Equal(len(s.Received(t, sub)), 0)   // nothing sent
			})
		}
	})

	t.Run("AnEndedContextFailsThePushWithoutAnOutcome", func(t *testing.T) {
		is := is.New(t)
		s := newScene(t)
		p, sub := s.Start(t), s.Subscribe(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		res, err := p.Push(ctx, sub, hub.PushMessage{Payload: []byte("x")})
		is.True(errors.Is(err, context.Canceled)) // the context's error
		is.Equal(res, hub.PushResult{})           // no outcome
	})

	t.Run("AServiceThatNeverAnswersFailsThePushWhenTheContextEnds", func(t *testing.T) {
		is := is.New(t)
		s := newScene(t)
		p, sub := s.Start(t), s.Subscribe(t)
		s.Hang(t, sub)
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		res, err := p.Push(ctx, sub, hub.PushMessage{Payload: []byte("x")})
		is.True(errors.Is(err, context.DeadlineExceeded)) // the deadline's error
		is.Equal(res, hub.PushResult{})                   // no outcome
	})

	t.Run("NoErrorCarriesTheEndpointTheKeysThePayloadOrThePrivateKey", func(t *testing.T) {
		is := is.New(t)
		s := newScene(t)
		p, sub := s.Start(t), s.Subscribe(t)
		payload := []byte("the secret payload 7f3a")
		var errs []error
		push := func(p hub.Pusher, sub hub.PushSubscription, m hub.PushMessage, ctx context.Context) {
			_, err := p.Push(ctx, sub, m)
			is.True(err != nil) // each of these fails
			errs = append(errs, err)
		}
		msg := hub.PushMessage{Payload: payload, TTL: time.Minute}
		push(s.StartUnconfigured(t), sub, msg, t.Context())
		push(p, sub, hub.PushMessage{Payload: bytes.Repeat(payload, 200)}, t.Context())
		short := sub
		short.Auth = sub.Auth[:8]
		push(p, short, msg, t.Context())
		short = sub
		short.P256DH = sub.P256DH[:33]
		push(p, short, msg, t.Context())
		bad := sub
		bad.Endpoint = "http://" + strings.TrimPrefix(sub.Endpoint, "https://")
		push(p, bad, msg, t.Context())
		bad.Endpoint = sub.Endpoint + "#x y%"
		push(p, bad, msg, t.Context())
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		push(p, sub, msg, ctx)
		s.Hang(t, sub)
		ctx, cancel = context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		push(p, sub, msg, ctx)

		secrets := append(s.Secrets(t), sub.Endpoint, sub.Endpoint[strings.LastIndexByte(sub.Endpoint, '/')+1:], string(payload))
		for _, b := range [][]byte{sub.P256DH, sub.Auth} {
			secrets = append(secrets, base64.RawURLEncoding.EncodeToString(b), base64.StdEncoding.EncodeToString(b), hex.EncodeToString(b), string(b))
		}
		for _, err := range errs {
			for _, secret := range secrets {
				is.True(!strings.Contains(err.Error(), secret)) // no secret in the error
			}
		}
	})

	t.Run("ConcurrentPushesAreEachDelivered", func(t *testing.T) {
		is := is.New(t)
		s := newScene(t)
		p, sub := s.Start(t), s.Subscribe(t)
		const n = 8
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				_, err := p.Push(t.Context(), sub, hub.PushMessage{Payload: []byte{byte(i)}, TTL: time.Minute})
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			is.NoErr(err) // every push was sent
		}
		seen := map[byte]bool{}
		for _, m := range s.Received(t, sub) {
			seen[m.Payload[0]] = true
		}
		is.Equal(len(seen), n) // each arrived, decrypted
	})
}
