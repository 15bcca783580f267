package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/wharfhub/wharf/hub"
)

// A terminal is attached over a WebSocket the Hub relays between the
// browser and the workspace's child (workspaceAttachShell). The Hub is no
// reverse proxy of it: it authenticates the request as every route does,
// holds the cookie caller to the same origin (a page on another site could
// otherwise open a WebSocket with the visitor's cookie: cross-site
// WebSocket hijacking), registers the attachment with the core (which
// bounds a user's attachments and ends them when the device session or
// the workspace's session ends), and dials the child's WebSocket first,
// so a refusal of the child's (an unknown shell, a bad offset) answers
// the browser as plain HTTP. Only then does it accept the browser's
// upgrade, and it relays messages both ways, one at a time per
// direction: a flood from the child waits in the child (its flow
// control), never in the Hub. Message contents are never logged: they are
// what someone types into a shell.

const (
	// attachReadLimit bounds a message from the browser (keys, a paste, a
	// resize); beyond it the browser's connection closes with 1009.
	attachReadLimit = 64 << 10
	// attachChildReadLimit bounds a message from the child (output chunks
	// of at most 32 KiB, small JSON).
	attachChildReadLimit = 64 << 10
	// attachWriteTimeout bounds each message's write to either side; a
	// side that does not take one in time is cut off.
	attachWriteTimeout = 30 * time.Second
	// attachDialTimeout bounds the handshake with the child.
	attachDialTimeout = 30 * time.Second
)

// The close codes the relay sends of its own (RFC 6455 7.4.1); a close
// either side sends is passed on as it is.
const (
	closeSessionEnded = websocket.StatusPolicyViolation // 1008: the device session ended
	closeGoingAway    = websocket.StatusGoingAway       // 1001: the other end or the workspace went away
)

// handleAttachShell relays a terminal attachment (workspaceAttachShell).
// Every refusal answers before the upgrade, as JSON.
func (a *api) handleAttachShell(w http.ResponseWriter, r *http.Request, c caller) error {
	if c.viaCookie && !a.sameOrigin(r) {
		return hub.Errorf(hub.Forbidden, "cross-origin request rejected")
	}
	if err := checkUpgrade(r); err != nil {
		return err
	}
	ws := r.PathValue("workspaceId")
	actx, release, err := a.workspaces.HoldAttachment(r.Context(), c.DeviceSession, ws)
	if err != nil {
		setRetryAfter(w, err)
		return err
	}
	defer release()
	end, err := a.workspaces.BeginForward(r.Context(), ws)
	if err != nil {
		return err
	}
	defer end() // the attachment is use of the workspace throughout
	child, err := a.dialShell(r, ws)
	if err != nil {
		if clientGone(r, err) {
			a.logFailure(r, "terminal attachment abandoned by its client", err)
			return nil
		}
		return err
	}
	// The server's deadlines suit short requests; an attachment lasts as
	// long as the page, and a hijacked connection keeps them.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	// The Origin check is ours (above, for cookie callers, with the
	// public URL's rules); the library's own would refuse a bearer
	// client's foreign Origin, which the API allows.
	browser, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		child.CloseNow()
		a.logFailure(r, "terminal attachment could not be accepted", err)
		return nil // Accept answered
	}
	browser.SetReadLimit(attachReadLimit)
	child.SetReadLimit(attachChildReadLimit)
	code := relay(actx, browser, child)
	a.log.LogAttrs(context.Background(), slog.LevelDebug, "terminal attachment ended",
		slog.String("op", "workspaceAttachShell"), slog.Int("close", int(code)))
	return nil
}

// checkUpgrade refuses, as JSON, a request the WebSocket library would
// refuse in plain text (RFC 6455 4.2.1).
func checkUpgrade(r *http.Request) error {
	keys := r.Header.Values("Sec-WebSocket-Key")
	ok := r.ProtoAtLeast(1, 1) && headerHasToken(r.Header, "Connection", "upgrade") &&
		headerHasToken(r.Header, "Upgrade", "websocket") && r.Header.Get("Sec-WebSocket-Version") == "13" && len(keys) == 1
	if ok {
		k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keys[0]))
		ok = err == nil && len(k) == 16
	}
	if !ok {
		return hub.Errorf(hub.Invalid, "a WebSocket upgrade (version 13) is required")
	}
	return nil
}

// headerHasToken reports whether the comma-separated header name lists
// token, case-insensitively.
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// dialShell opens the child's WebSocket of the shell r names, forwarding
// r's offset. The child's own refusal (400, 404) becomes the error the
// browser is answered with; anything else is the workspace unreachable.
func (a *api) dialShell(r *http.Request, ws string) (*websocket.Conn, error) {
	u := url.URL{Scheme: "http", Host: ws + sessionHostSuffix, Path: r.URL.Path, RawPath: r.URL.RawPath}
	if off, ok := r.URL.Query()["offset"]; ok {
		u.RawQuery = url.Values{"offset": off}.Encode()
	}
	ctx, cancel := context.WithTimeout(r.Context(), attachDialTimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPClient: a.shells, CompressionMode: websocket.CompressionDisabled})
	if err == nil {
		return conn, nil
	}
	if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
		if refusal := childRefusal(resp); refusal != nil {
			return nil, refusal
		}
	}
	return nil, hub.Wrap(hub.Unavailable, err, "workspace session unreachable")
}

// childRefusal reads the child's refusal of an attachment: a 400 or 404
// with an {error} body (the library kept its first KiB), or nil for any
// other answer.
func childRefusal(resp *http.Response) error {
	kind, ok := map[int]hub.Kind{http.StatusBadRequest: hub.Invalid, http.StatusNotFound: hub.NotFound}[resp.StatusCode]
	if !ok || resp.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(resp.Body)
	var body struct {
		Error string `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if dec.Decode(&body) != nil || body.Error == "" {
		return nil
	}
	return hub.Errorf(kind, "%s", body.Error)
}

// pumpEnd is how one direction of the relay ended: reading its source
// failed (readErr: the source closed, or broke) or writing to its
// destination did (writeErr).
type pumpEnd struct {
	toChild  bool // the browser -> child direction
	readErr  error
	writeErr error
}

// relay relays messages between browser and child until either ends or
// actx does (the attachment must end), then closes both, telling each why,
// and waits for both directions to stop. It returns the code the browser
// was closed with.
func relay(actx context.Context, browser, child *websocket.Conn) websocket.StatusCode {
	ends := make(chan pumpEnd, 2)
	go func() { ends <- pump(browser, child, true) }()
	go func() { ends <- pump(child, browser, false) }()
	var toBrowser, toChild closeFrame
	pending := 2 // directions still running
	select {
	case <-actx.Done():
		toChild = closeFrame{closeGoingAway, "client detached"}
		if hub.KindOf(context.Cause(actx)) == hub.Unauthenticated {
			toBrowser = closeFrame{closeSessionEnded, "session ended"}
		} else {
			toBrowser = closeFrame{closeGoingAway, hub.MessageOf(context.Cause(actx))}
		}
	case e := <-ends:
		toBrowser, toChild = closingOf(e)
		pending--
	}
	var wg sync.WaitGroup
	wg.Go(func() { toBrowser.send(browser) })
	wg.Go(func() { toChild.send(child) })
	wg.Wait()
	for ; pending > 0; pending-- {
		<-ends // the closes stop it
	}
	return toBrowser.code
}

// closingOf says what each side is told when one direction ended: a
// close either side sent is passed to the other; a side that broke or
// stopped taking messages leaves the other told that it went away.
func closingOf(e pumpEnd) (toBrowser, toChild closeFrame) {
	goneChild := closeFrame{closeGoingAway, "workspace session went away"}
	goneBrowser := closeFrame{closeGoingAway, "client went away"}
	if e.writeErr != nil {
		if e.toChild {
			return goneChild, closeFrame{}
		}
		return closeFrame{}, goneBrowser
	}
	var ce websocket.CloseError
	passed := errors.As(e.readErr, &ce) && sendable(ce.Code)
	if e.toChild {
		if passed {
			return closeFrame{}, closeFrame{ce.Code, ce.Reason}
		}
		return closeFrame{}, goneBrowser
	}
	if passed {
		return closeFrame{ce.Code, ce.Reason}, closeFrame{}
	}
	return goneChild, closeFrame{}
}

// sendable reports whether code may be sent in a close frame (1005, 1006
// and 1015 only describe closes, and 1004 is reserved).
func sendable(code websocket.StatusCode) bool {
	return (code >= 1000 && code <= 1014 && code != 1004 && code != 1005 && code != 1006) || (code >= 3000 && code <= 4999)
}

// closeFrame is the close a side is sent; the zero value closes the
// connection without a frame (the side closed already, or broke).
type closeFrame struct {
	code   websocket.StatusCode
	reason string
}

func (f closeFrame) send(c *websocket.Conn) {
	if f.code == 0 {
		c.CloseNow()
		return
	}
	// Close waits (a bounded time) for the other end's answer; an error
	// only says the connection was gone already.
	_ = c.Close(f.code, f.reason)
}

// pump copies messages from src to dst, one at a time, until one side
// fails. A message waits for its write, at most attachWriteTimeout, before
// the next is read: what dst does not take stays in src's sender. Reads
// use no deadline (a shell may be silent for hours) and no context: a
// cancelled read would drop the connection without the close frame that
// tells the client why; relay ends them by closing the connections.
func pump(src, dst *websocket.Conn, toChild bool) pumpEnd {
	limit := attachChildReadLimit
	if toChild {
		limit = attachReadLimit
	}
	// The library reads one byte past its limit before it refuses the
	// message (closing with 1009); the buffer leaves room for that read.
	buf := make([]byte, limit+2)
	for {
		typ, msg, err := readMessage(src, buf)
		if err != nil {
			return pumpEnd{toChild: toChild, readErr: err}
		}
		ctx, cancel := context.WithTimeout(context.Background(), attachWriteTimeout)
		err = dst.Write(ctx, typ, msg)
		cancel()
		if err != nil {
			return pumpEnd{toChild: toChild, writeErr: err}
		}
	}
}

// readMessage reads src's next message into buf, which is longer than
// what src's read limit lets through.
func readMessage(src *websocket.Conn, buf []byte) (websocket.MessageType, []byte, error) {
	typ, r, err := src.Reader(context.Background())
	if err != nil {
		return 0, nil, err
	}
	n := 0
	for {
		m, err := r.Read(buf[n:])
		n += m
		switch {
		case errors.Is(err, io.EOF):
			return typ, buf[:n], nil
		case err != nil:
			return 0, nil, err
		case n == len(buf):
			return 0, nil, errors.New("message over the read limit")
		}
	}
}
