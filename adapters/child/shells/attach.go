package shells

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/coder/websocket"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
)

// client is one attachment of a shell. Its offsets and size are guarded
// by its shell's lock.
type client struct {
	s    *shell
	conn *websocket.Conn
	done chan struct{} // closed when the attachment ends
	once sync.Once
	read chan struct{} // closed when the read loop returned

	sent, acked int64 // the next offset to send; what the client processed
	cols, rows  int   // the size it was last told
	stall       int   // the generation of the armed no-ack timer, 0 when none
	timer       hub.Timer
	generation  int
}

// ServeAttach serves the attach WebSocket of the shell id (the API's GET
// .../shells/{shellId}/attach?offset=N): 404 JSON for an unknown shell,
// 400 JSON for a bad offset or a request that is not a WebSocket upgrade,
// all before the upgrade. It returns once the attachment ended.
func (r *Registry) ServeAttach(w http.ResponseWriter, req *http.Request, id string) {
	s, err := r.get(id)
	if err != nil {
		childproto.WriteError(w, http.StatusNotFound, "unknown shell")
		return
	}
	offset, resume, err := parseOffset(req)
	if err != nil {
		childproto.WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !isUpgrade(req) {
		childproto.WriteError(w, http.StatusBadRequest, "not a WebSocket upgrade")
		return
	}
	// The Hub checks Origin for cookie callers before it dials, and only
	// the Hub reaches the child (its Unix socket is private); the Host the
	// Hub dials with is the child's own, which a browser's Origin never
	// matches. Checking Origin here would refuse every real attachment.
	conn, err := websocket.Accept(w, req, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept answered
	}
	conn.SetReadLimit(MaxClientMessage)
	c := &client{s: s, conn: conn, done: make(chan struct{}), read: make(chan struct{})}
	hello := s.attach(c, offset, resume)
	go c.readLoop()
	c.sendLoop(hello)
	<-c.read
}

// parseOffset reads the optional offset query parameter.
func parseOffset(req *http.Request) (int64, bool, error) {
	q := req.URL.Query()
	vs, ok := q["offset"]
	if !ok {
		return 0, false, nil
	}
	if len(vs) != 1 || len(q) != 1 {
		return 0, false, errBadOffset
	}
	n, err := strconv.ParseInt(vs[0], 10, 64)
	if err != nil || n < 0 {
		return 0, false, errBadOffset
	}
	return n, true, nil
}

var errBadOffset = hub.Errorf(hub.Invalid, "offset is a byte offset: a non-negative integer")

// isUpgrade reports whether req asks for a WebSocket.
func isUpgrade(req *http.Request) bool {
	if req.Method != http.MethodGet || !strings.EqualFold(req.Header.Get("Upgrade"), "websocket") {
		return false
	}
	for _, v := range req.Header.Values("Connection") {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "upgrade") {
				return true
			}
		}
	}
	return false
}

// attach adds c to s and returns its hello: it resumes at offset when
// asked and still held, else starts at the ring's start.
func (s *shell) attach(c *client, offset int64, resume bool) helloMessage {
	s.mu.Lock()
	start := s.ring.start
	if resume && offset >= s.ring.start && offset <= s.ring.head {
		start = offset
	}
	c.sent, c.acked, c.cols, c.rows = start, start, s.cols, s.rows
	first := len(s.clients) == 0
	s.clients[c] = struct{}{}
	s.notify()
	h := helloMessage{Type: TypeHello, Offset: start, ReadOnly: s.readOnly(), Cols: s.cols, Rows: s.rows}
	s.mu.Unlock()
	if first {
		s.reg.moved()
	}
	return h
}

// end ends the attachment with the close code and reason: it leaves its
// shell (which may then write over what it was not sent) and closes the
// WebSocket. Later calls do nothing.
func (c *client) end(code websocket.StatusCode, reason string) {
	c.once.Do(func() {
		close(c.done)
		s := c.s
		s.mu.Lock()
		delete(s.clients, c)
		if c.timer != nil {
			c.timer.Stop()
		}
		last := len(s.clients) == 0
		s.notify()
		s.mu.Unlock()
		if last {
			s.reg.moved()
		}
		_ = c.conn.Close(code, reason)
	})
}

// outgoing is the next message a client is sent.
type outgoing struct {
	typ  websocket.MessageType
	data []byte
	last bool // the exit message: the attachment ends after it
}

// sendLoop sends the hello, then the output as the window allows, the
// size when another client changed it, and the exit, until the
// attachment ends.
func (c *client) sendLoop(hello helloMessage) {
	buf := make([]byte, readChunk)
	if !c.write(outgoing{typ: websocket.MessageText, data: encode(hello)}) {
		return
	}
	for {
		m, ok := c.next(buf)
		if !ok || !c.write(m) {
			return
		}
		if m.last {
			c.end(websocket.StatusNormalClosure, "exited")
			return
		}
	}
}

// next waits for the next message for c; false once the attachment ended
// (closing it when the shell was closed).
func (c *client) next(buf []byte) (outgoing, bool) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		select {
		case <-c.done:
			return outgoing{}, false
		default:
		}
		switch {
		case s.closed:
			s.mu.Unlock()
			c.end(websocket.StatusNormalClosure, "shell closed")
			s.mu.Lock()
			return outgoing{}, false
		case c.sent < s.ring.start:
			// Only an agent's terminal writes over what a client was not
			// sent: it never waits for viewers.
			c.sent = s.ring.start
			c.acked = max(c.acked, c.sent)
			return outgoing{typ: websocket.MessageText, data: encode(skipMessage{Type: TypeSkip, Offset: c.sent})}, true
		case c.cols != s.cols || c.rows != s.rows:
			c.cols, c.rows = s.cols, s.rows
			return outgoing{typ: websocket.MessageText, data: encode(resizeMessage{Type: TypeResize, Cols: c.cols, Rows: c.rows})}, true
		case c.sent < s.ring.head && c.sent-c.acked < Window:
			n := s.ring.read(buf[:min(int64(len(buf)), Window-(c.sent-c.acked))], c.sent)
			c.sent += int64(n)
			s.notify() // the reader may wait for this client
			return outgoing{typ: websocket.MessageBinary, data: buf[:n]}, true
		case c.sent < s.ring.head:
			c.armStall()
		case s.ended:
			return outgoing{typ: websocket.MessageText, data: encode(exitMessage{Type: TypeExit, ExitCode: s.exitCode}), last: true}, true
		}
		wait := s.changed
		s.mu.Unlock()
		select {
		case <-wait:
		case <-c.done:
		}
		s.mu.Lock()
	}
}

// armStall starts the no-ack timer unless it runs: output waits for c,
// whose window is full. The caller holds c.s.mu.
func (c *client) armStall() {
	if c.stall != 0 {
		return
	}
	c.generation++
	gen := c.generation
	c.stall = gen
	c.timer = c.s.reg.opts.Clock.AfterFunc(c.s.reg.opts.NoAck, func() {
		c.s.mu.Lock()
		fired := c.stall == gen
		c.s.mu.Unlock()
		if fired {
			go c.end(websocket.StatusPolicyViolation, "not reading")
		}
	})
}

// write sends m within the no-ack bound; false when it failed (the
// attachment is ended then).
func (c *client) write(m outgoing) bool {
	ctx, cancel := context.WithTimeout(context.Background(), c.s.reg.opts.NoAck)
	defer cancel()
	if err := c.conn.Write(ctx, m.typ, m.data); err != nil {
		c.end(websocket.StatusPolicyViolation, "not reading")
		return false
	}
	return true
}

// readLoop reads the client's messages until the attachment ends.
func (c *client) readLoop() {
	defer close(c.read)
	for {
		typ, b, err := c.conn.Read(context.Background())
		if err != nil {
			// The client left, or the read limit closed it (1009).
			c.end(websocket.StatusNormalClosure, "")
			return
		}
		if typ != websocket.MessageText {
			c.end(websocket.StatusUnsupportedData, "binary messages are not accepted")
			return
		}
		m, err := DecodeClientMessage(b)
		if err != nil {
			c.end(websocket.StatusUnsupportedData, err.Error())
			return
		}
		if !c.handle(m) {
			return
		}
	}
}

// handle applies one client message; false when the attachment ended.
func (c *client) handle(m ClientMessage) bool {
	s := c.s
	switch m.Type {
	case TypeInput:
		s.mu.Lock()
		ignored := s.readOnly() || s.ended || s.closed
		s.mu.Unlock()
		if ignored || m.Data == "" {
			return true
		}
		select {
		case s.in <- []byte(m.Data):
		case <-c.done:
			return false
		}
	case TypeResize:
		s.mu.Lock()
		if !s.readOnly() && !s.ended && !s.closed {
			c.cols, c.rows = m.Cols, m.Rows // this client knows
			s.resize(m.Cols, m.Rows)
		}
		s.mu.Unlock()
	case TypeAck:
		s.mu.Lock()
		beyond := m.Offset > c.sent
		if !beyond && m.Offset > c.acked {
			c.acked = m.Offset
			c.stall = 0
			if c.timer != nil {
				c.timer.Stop()
				c.timer = nil
			}
			s.notify()
		}
		s.mu.Unlock()
		if beyond {
			c.end(websocket.StatusUnsupportedData, "ack beyond the output sent")
			return false
		}
	}
	return true
}
