package webpush_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/webpush"
	"github.com/wharfhub/wharf/fakes/pushservice"
	"github.com/wharfhub/wharf/hub"
)

// servicePusher returns a pusher whose client trusts svc, and tells svc
// its public key.
func servicePusher(t *testing.T, svc *pushservice.Service) *webpush.Pusher {
	t.Helper()
	p, err := webpush.New(webpush.Options{
		KeyFile: filepath.Join(t.TempDir(), "vapid.key"),
		Contact: contact,
		Client:  svc.Client(),
	})
	if err != nil {
		t.Fatal(err)
	}
	svc.SetVAPIDPublicKey(p.PublicKey())
	return p
}

func TestAPushTheServiceNeverAnswersEndsAtTheSendTimeout(t *testing.T) {
	is := is.New(t)
	svc := pushservice.New(t, pushservice.Options{})
	p, sub := servicePusher(t, svc), svc.NewSubscription()
	svc.Reply(sub, pushservice.Reply{Hang: true})
	webpush.SetSendTimeout(p, 200*time.Millisecond)
	res, err := p.Push(t.Context(), sub, hub.PushMessage{Payload: []byte("x")}) // the test's context has no deadline
	is.True(errors.Is(err, context.DeadlineExceeded))                           // the Pusher's own bound ended it
	is.Equal(hub.KindOf(err), hub.Unavailable)                                  // the service unavailable
	is.True(strings.Contains(err.Error(), "did not answer within 200ms"))       // saying so
	is.Equal(res, hub.PushResult{})                                             // with no outcome
}

func TestAHeldPushIsAnsweredOnceReleased(t *testing.T) {
	is := is.New(t)
	svc := pushservice.New(t, pushservice.Options{})
	p, sub := servicePusher(t, svc), svc.NewSubscription()
	svc.Reply(sub, pushservice.Reply{Status: 202, Hang: true})
	type answer struct {
		res hub.PushResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := p.Push(t.Context(), sub, hub.PushMessage{Payload: []byte("held")})
		done <- answer{res, err}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	msgs, err := svc.Wait(ctx, 1)
	is.NoErr(err)                             // the push arrived
	is.Equal(string(msgs[0].Payload), "held") // decrypted
	svc.Release()
	select {
	case a := <-done:
		is.NoErr(a.err)                                                         // then was answered
		is.Equal(a.res, hub.PushResult{Outcome: hub.PushAccepted, Status: 202}) // as scripted
	case <-ctx.Done():
		t.Fatal("the released push was not answered")
	}
}

func TestAHeldPushFailsWhenTheServiceCloses(t *testing.T) {
	is := is.New(t)
	svc := pushservice.New(t, pushservice.Options{})
	p, sub := servicePusher(t, svc), svc.NewSubscription()
	svc.Reply(sub, pushservice.Reply{Hang: true})
	done := make(chan error, 1)
	go func() {
		_, err := p.Push(t.Context(), sub, hub.PushMessage{Payload: []byte("held")})
		done <- err
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := svc.Wait(ctx, 1)
	is.NoErr(err) // the push arrived and is held
	svc.Close()
	select {
	case err := <-done:
		is.Equal(hub.KindOf(err), hub.Unavailable) // then failed, its answer unknown
	case <-ctx.Done():
		t.Fatal("the held push did not end with the service")
	}
}

func TestTransportFailuresNeverQuoteTheEndpoint(t *testing.T) {
	const id = "f00dfacecafe"
	svc := pushservice.New(t, pushservice.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	for _, c := range []struct {
		name     string
		client   *http.Client
		endpoint string
		says     string
		cause    error
	}{
		{"ARefusedConnection", svc.Client(), "https://" + closed + "/push/" + id, "could not be reached: connection refused", syscall.ECONNREFUSED},
		{"AnUntrustedCertificate", nil, "https://" + svc.Host() + "/push/" + id, "certificate is not trusted", nil},
		{"AnUnknownHost", &http.Client{Transport: failing{&net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "push." + id + ".example", IsNotFound: true}}}},
			"https://push." + id + ".example/push/" + id, "host name could not be resolved", nil},
		{"AnotherFailure", &http.Client{Transport: failing{errors.New("tls: " + id)}},
			"https://push.example/push/" + id, "could not be reached", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			p, err := webpush.New(webpush.Options{KeyFile: filepath.Join(t.TempDir(), "k"), Contact: contact, Client: c.client})
			is.NoErr(err) // started
			sub := svc.NewSubscription()
			sub.Endpoint = c.endpoint
			res, err := p.Push(t.Context(), sub, hub.PushMessage{Payload: []byte("x")})
			is.Equal(hub.KindOf(err), hub.Unavailable)       // the service unavailable
			is.True(strings.Contains(err.Error(), c.says))   // saying why
			is.True(!strings.Contains(err.Error(), id))      // never with the endpoint's path or host
			is.True(!strings.Contains(err.Error(), "127.0")) // nor an address
			is.Equal(res, hub.PushResult{})                  // no outcome
			if c.cause != nil {
				is.True(errors.Is(err, c.cause)) // the cause kept for errors.Is
			}
		})
	}
}

// failing is a RoundTripper whose every round trip fails with err.
type failing struct{ err error }

func (f failing) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

func TestThePushServiceSeesOneVerifiedDecryptedMessage(t *testing.T) {
	is := is.New(t)
	svc := pushservice.New(t, pushservice.Options{})
	p, sub := servicePusher(t, svc), svc.NewSubscription()
	before := time.Now()
	_, err := p.Push(t.Context(), sub, hub.PushMessage{Payload: []byte(`{"version":1}`), TTL: 5 * time.Minute, Urgency: "normal"})
	is.NoErr(err) // sent
	msgs := svc.Messages()
	is.Equal(len(msgs), 1)                                                                // one message
	is.Equal(msgs[0].Subscription, svc.ID(sub))                                           // to the subscription
	is.Equal(string(msgs[0].Payload), `{"version":1}`)                                    // decrypted
	is.Equal(msgs[0].Claims.Aud, "https://"+svc.Host())                                   // signed for the service's origin
	is.Equal(msgs[0].Claims.Sub, contact)                                                 // by the operator
	is.True(!msgs[0].Claims.Exp.Before(before.Add(12 * time.Hour).Truncate(time.Second))) // for 12 h
	is.Equal(len(svc.Failures()), 0)                                                      // nothing refused
}
