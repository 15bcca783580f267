package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// deviceLabel names this client in the user's device session list
// (GET /api/hub/sessions).
const deviceLabel = "wharf example client"

// requestTimeout bounds every request but the stream itself.
const requestTimeout = 10 * time.Second

// errDeviceSessionGone is the end of the program when the Hub no longer knows
// the session (401): it expired, was revoked, or its user signed out or
// changed password. Retrying cannot help; logging in again can.
var errDeviceSessionGone = errors.New("the Hub session is gone (expired, revoked or signed out); run the client again to log in")

// statusError is an answer other than 200, with the Hub's `{error}` message
// when it sent one.
type statusError struct {
	op      string // such as "GET /api/hub/live"
	code    int
	message string
}

func (e *statusError) Error() string {
	msg := e.message
	if msg == "" {
		msg = http.StatusText(e.code)
	}
	return fmt.Sprintf("%s: %d %q", e.op, e.code, msg)
}

// readStatusError reads the Error body of a failed answer (a bounded
// amount) into a statusError.
func readStatusError(op string, resp *http.Response) *statusError {
	var body struct {
		Error string `json:"error"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 4<<10)).Decode(&body)
	return &statusError{op: op, code: resp.StatusCode, message: body.Error}
}

// statusCode is the HTTP status of err when it is a statusError, else 0.
func statusCode(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.code
	}
	return 0
}

// postJSON sends body (none when nil) as JSON to u with the bearer session
// (when given) and decodes a 200 answer into out. Any other status is a
// statusError. op names the operation in errors, such as "POST /login".
func postJSON(ctx context.Context, c *http.Client, op string, u *url.URL, bearer string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return readStatusError(op, resp)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(out); err != nil {
		return fmt.Errorf("%s: reading the answer: %w", op, err)
	}
	return nil
}

// login opens a device session (POST /login, LoginRequest) and returns its
// id, the bearer credential of every later request, and the user name the
// Hub confirmed. The Hub also sets the id as a cookie; this client has no
// cookie jar and uses the bearer only.
func login(ctx context.Context, c *http.Client, hub *url.URL, name, password string) (sessionID, user string, err error) {
	req := struct {
		Name        string `json:"name"`
		Password    string `json:"password"`
		DeviceLabel string `json:"deviceLabel"`
	}{name, password, deviceLabel}
	var res struct {
		SessionID string `json:"sessionId"`
		User      string `json:"user"`
	}
	err = postJSON(ctx, c, "POST /login", hub.JoinPath("login"), "", req, &res)
	switch statusCode(err) {
	case 0:
	case http.StatusUnauthorized:
		return "", "", fmt.Errorf("wrong user name or password (%w)", err)
	case http.StatusTooManyRequests:
		return "", "", fmt.Errorf("too many failed logins; wait a minute (%w)", err)
	}
	if err != nil {
		return "", "", err
	}
	if res.SessionID == "" {
		return "", "", errors.New("POST /login: the answer has no sessionId")
	}
	return res.SessionID, res.User, nil
}

// logout revokes the session (POST /logout with the bearer, no body), so
// that each run of the client does not leave a device session behind.
func logout(ctx context.Context, c *http.Client, hub *url.URL, sessionID string) error {
	var res struct {
		Revoked bool `json:"revoked"`
	}
	return postJSON(ctx, c, "POST /logout", hub.JoinPath("logout"), sessionID, nil, &res)
}
