package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// callTimeout bounds every request to the server but the reads of its
// providers (readTimeout) and the one a browser login waits on
// (flowTimeout).
const callTimeout = 15 * time.Second

// readTimeout bounds a read of the server's providers or login methods:
// the first one after a start or a refresh waits while OpenCode loads its
// providers and plugins (2.6 s of CPU on 1.18.33; 12.7 s measured on a
// loaded two-core machine).
const readTimeout = 60 * time.Second

// maxAnswer bounds the answers read whole (everything but the catalog).
const maxAnswer = 1 << 20

// client talks to one `opencode serve` on loopback, with the runtime's
// own password.
type client struct {
	base       string // "http://127.0.0.1:PORT"
	user, pass string
	http       *http.Client
}

func newClient(base, user, pass string) *client {
	return &client{base: base, user: user, pass: pass, http: &http.Client{
		// No proxy (the server is on loopback), no redirect followed.
		Transport: &http.Transport{Proxy: nil, MaxResponseHeaderBytes: 64 << 10, ResponseHeaderTimeout: 0},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

// answer is a server's answer: its status and (bounded) body.
type answer struct {
	status int
	body   []byte
}

// ok reports a 2xx answer.
func (a answer) ok() bool { return a.status >= 200 && a.status < 300 }

// errUnreachable wraps a failed exchange (no answer, an unreadable one).
var errUnreachable = errors.New("the OpenCode server did not answer")

// call sends method path with body (JSON-encoded unless nil) and reads
// the answer whole, at most maxAnswer bytes, all within ctx and
// callTimeout (timeout 0: ctx alone bounds it). A failed exchange is an
// error wrapping errUnreachable; any answer, whatever its status, is not.
func (c *client) call(ctx context.Context, method, path string, body any, timeout time.Duration) (answer, error) {
	var a answer
	err := c.stream(ctx, method, path, body, timeout, func(status int, r io.Reader) error {
		a.status = status
		var err error
		a.body, err = io.ReadAll(&limitReader{r: r, n: maxAnswer})
		return err
	})
	return a, err
}

// stream is call with the answer's body handed to read instead.
func (c *client) stream(ctx context.Context, method, path string, body any, timeout time.Duration, read func(status int, r io.Reader) error) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.SetBasicAuth(c.user, c.pass)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// The URL error names the path only: no secret travels in one.
		return fmt.Errorf("%w: %s %s: %w", errUnreachable, method, path, err)
	}
	defer resp.Body.Close()
	if err := read(resp.StatusCode, resp.Body); err != nil {
		return fmt.Errorf("%w: %s %s: reading the answer: %w", errUnreachable, method, path, err)
	}
	return nil
}

// serverError is what an error answer says, as far as the driver uses it:
// its name and the field it names. Its messages are never read: some
// repeat the request (a key among them).
type serverError struct {
	Name  string
	Field string
}

// parseError reads an error answer: {name, data: {field?, …}} (the
// provider routes) or {_tag, field?, …} (the request checks).
func parseError(body []byte) serverError {
	var e struct {
		Name string `json:"name"`
		Tag  string `json:"_tag"`
		Data struct {
			Field string `json:"field"`
		} `json:"data"`
		Field string `json:"field"`
	}
	if json.Unmarshal(body, &e) != nil {
		return serverError{}
	}
	se := serverError{Name: e.Name, Field: e.Data.Field}
	if se.Name == "" {
		se.Name, se.Field = e.Tag, e.Field
	}
	if len(se.Name) > maxID {
		se.Name = ""
	}
	if !validID(se.Field) {
		se.Field = ""
	}
	return se
}

// unavailable is the error for a server that did not answer as it should.
func unavailable(cause error, msg string) error {
	return &hub.Error{Kind: hub.Unavailable, Message: msg, Err: cause}
}

// invalid is a refusal naming field.
func invalid(field, msg string) error {
	e := &hub.Error{Kind: hub.Invalid, Message: msg}
	if field != "" {
		e.Details = &hub.Details{Field: field}
	}
	return e
}

// statusError describes an unexpected answer for logs: its status and
// error name, never its body.
func statusError(path string, a answer) error {
	return fmt.Errorf("%s answered %d %s", path, a.status, parseError(a.body).Name)
}
