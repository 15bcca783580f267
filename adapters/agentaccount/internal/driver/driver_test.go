package driver_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/hub"
)

func TestDeliverRequestsTheAddressOnceAndFollowsNoRedirect(t *testing.T) {
	is := is.New(t)
	var hits, elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	var got string
	listener := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		got = r.URL.RawQuery
		http.Redirect(w, r, other.URL+"/next", http.StatusFound) // a listener that sends the browser on
	}))
	defer listener.Close()
	is.NoErr(driver.Deliver(context.Background(), listener.URL+"/auth/callback?code=c&state=s")) // delivered
	is.Equal(hits.Load(), int32(1))                                                              // once
	is.Equal(got, "code=c&state=s")                                                              // with the query
	is.Equal(elsewhere.Load(), int32(0))                                                         // the redirect was not followed
}

func TestDeliverToASilentListenerIsRefusedWithoutTheAddress(t *testing.T) {
	is := is.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	addr := "http://" + ln.Addr().String() + "/cb?code=secret-code"
	ln.Close() // nothing listens there any more
	err = driver.Deliver(context.Background(), addr)
	var he *hub.Error
	is.True(errors.As(err, &he))                           // a public error
	is.Equal(he.Kind, hub.Invalid)                         // 400
	is.Equal(he.Details.Field, "address")                  // on the address
	is.Equal(he.Message, driver.ErrListenerSilent)         // start the login again
	is.True(!strings.Contains(err.Error(), "secret-code")) // never repeating it
}

func TestLookPathNamesTheCommandItDidNotFind(t *testing.T) {
	is := is.New(t)
	_, err := driver.LookPath("Codex", "codex", []string{"PATH=" + t.TempDir() + ":relative/dir"})
	is.True(errors.Is(err, hub.ErrAgentNotInstalled))        // not installed
	is.True(strings.Contains(hub.MessageOf(err), "`codex`")) // naming the command
	_, err = driver.LookPath("Sh", "sh", []string{"PATH=relative:/bin:/usr/bin"})
	is.NoErr(err) // found in an absolute folder; a relative entry is never searched
}
