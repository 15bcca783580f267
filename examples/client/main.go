// Command client follows one workspace of a Wharf Hub through the live
// stream, as a real client would, and prints every event on one line.
//
//	WHARF_PASSWORD=... go run ./examples/client -user ann -ws myproject
//
// It logs in (POST /login) and opens GET /api/hub/live for the workspace
// with the Hub-wide activity topic and one document subscription. It keeps
// that subscription's cursor, advancing it only on data events, answers a
// resync by adding the subscription again
// (POST /api/hub/live/{streamId}/subscriptions), and when the connection
// drops or the Hub ends the stream it reconnects with backoff (1 s,
// doubling, at most 15 s), presenting the cursor it kept. Ctrl-C stops it
// and signs its session out.
//
// Flags:
//
//	-hub URL      the Hub (default http://127.0.0.1:4700)
//	-user NAME    the user to log in as
//	-ws ID        the workspace id, as in /s/<id>/ and GET /api/hub/state
//	-doc-key KEY  the document watch context (a LiveDocumentKey), such as
//	              compareTarget=last-commit; empty means the default one
//
// The password comes only from $WHARF_PASSWORD, never from a flag, so it
// stays out of shell history and process listings. The program exits 2 on
// a mistake on the command line and 1 when the Hub refuses it: a wrong
// password, an unknown workspace, or a session that is gone (401).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// config is what the command line and the environment say.
type config struct {
	hub      string
	user     string
	password string // from $WHARF_PASSWORD
	ws       string
	docKey   string
}

func main() {
	var cfg config
	flag.StringVar(&cfg.hub, "hub", "http://127.0.0.1:4700", "base `URL` of the Hub")
	flag.StringVar(&cfg.user, "user", "", "user `name` to log in as; the password comes from $WHARF_PASSWORD")
	flag.StringVar(&cfg.ws, "ws", "", "`id` of the workspace to follow")
	flag.StringVar(&cfg.docKey, "doc-key", "", "document watch context, a LiveDocumentKey `key` such as compareTarget=last-commit; empty for the default")
	flag.Parse()
	cfg.password = os.Getenv("WHARF_PASSWORD")
	if err := cfg.check(flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		flag.Usage()
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, cfg, newHTTPClient(), os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
}

// check refuses a command line the Hub would refuse anyway.
func (cfg config) check(args []string) error {
	switch {
	case len(args) > 0:
		return fmt.Errorf("unexpected arguments %q", args)
	case cfg.user == "":
		return errors.New("-user is required")
	case cfg.password == "":
		return errors.New("set WHARF_PASSWORD to the password of -user")
	case cfg.ws == "":
		return errors.New("-ws is required")
	case len(cfg.ws) > maxWorkspaceIDBytes:
		return fmt.Errorf("-ws is longer than %d bytes", maxWorkspaceIDBytes)
	case len(cfg.docKey) > maxKeyBytes:
		return fmt.Errorf("-doc-key is longer than %d bytes", maxKeyBytes)
	}
	u, err := url.Parse(cfg.hub)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("-hub %q is not an http:// or https:// URL", cfg.hub)
	}
	return nil
}

// newHTTPClient has no overall timeout, which would cut the stream, but
// bounds the wait for an answer's headers; the Hub sends a stream's headers
// at once.
func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 30 * time.Second
	return &http.Client{Transport: t}
}

// run logs in, follows the stream until ctx ends or the Hub refuses it, and
// signs out. out receives one line per event.
func run(ctx context.Context, cfg config, c *http.Client, out io.Writer) error {
	hub, err := url.Parse(cfg.hub)
	if err != nil {
		return err
	}
	token, user, err := login(ctx, c, hub, cfg.user, cfg.password)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "logged in as %s\n", user)

	s := newStream(c, hub, token, cfg.ws, out, &subscription{Topic: topicDocument, Key: cfg.docKey})
	err = s.run(ctx)

	if !errors.Is(err, errDeviceSessionGone) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
		defer cancel()
		if lerr := logout(lctx, c, hub, token); lerr != nil {
			fmt.Fprintf(out, "signing out: %v\n", lerr)
		} else {
			fmt.Fprintln(out, "signed out")
		}
	}
	return err
}
