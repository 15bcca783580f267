package credenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// maxCredConns bounds the requests one session's credential socket
// serves at once; a connection past it is closed unanswered.
const maxCredConns = 8

// credServer serves one session's credential socket (credproto.go) in
// the Hub's process, answering from the session's broker.
type credServer struct {
	broker hub.SessionBroker
	log    *slog.Logger
	l      *net.UnixListener
	path   string
	slots  chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

// serveCredentials listens on path (made 0600; its folder is private) and
// answers from broker until close.
func serveCredentials(path string, broker hub.SessionBroker, log *slog.Logger) (*credServer, error) {
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &credServer{broker: broker, log: log, l: l, path: path, slots: make(chan struct{}, maxCredConns),
		ctx: ctx, cancel: cancel, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// close stops serving: it ends every request in progress (a broker call
// sees its context end), removes the socket and waits for the handlers.
// Closing twice does nothing.
func (s *credServer) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.cancel()
	s.l.Close() // removes the socket file too (net's unlink-on-close)
	s.wg.Wait()
}

func (s *credServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.l.Accept()
		if err != nil {
			return
		}
		select {
		case s.slots <- struct{}{}:
		default:
			s.log.Warn("credential request refused: too many at once")
			c.Close()
			continue
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			<-s.slots
			continue
		}
		s.conns[c] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.handle(c)
			c.Close()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			<-s.slots
		}()
	}
}

// handle answers one request on c.
func (s *credServer) handle(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(credReadTimeout))
	req, err := readCredRequest(bufio.NewReaderSize(c, 4096))
	if err != nil {
		s.log.Warn("credential request refused: malformed")
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, credUseTimeout)
	defer cancel()
	payload, err := s.answer(ctx, req)
	_ = c.SetWriteDeadline(time.Now().Add(credWriteTimeout))
	if err != nil {
		// A warning, so the daemon's throttle bounds what a session
		// asking in a loop can write to the log.
		s.log.Warn("credential request answered with nothing", "op", req.op, "err", hub.MessageOf(err))
		_, _ = c.Write([]byte("no\n"))
		return
	}
	w := bufio.NewWriter(c)
	fmt.Fprintf(w, "ok %d\n", len(payload))
	w.Write(payload)
	if err := w.Flush(); err != nil {
		s.log.Warn("credential answer could not be written", "op", req.op)
	}
	clear(payload)
}

// answer asks the broker. The host is normalized here, at the boundary,
// so the broker sees only hosts in their one stored form.
func (s *credServer) answer(ctx context.Context, req credRequest) ([]byte, error) {
	switch req.op {
	case opToken:
		host, err := credential.NormalizeHost(req.host)
		if err != nil {
			return nil, err
		}
		user, token, err := s.broker.Token(ctx, host)
		if err != nil {
			return nil, err
		}
		defer clear(token)
		if user == "" {
			user = "oauth2" // what hosts take when the name does not matter
		}
		if !printable(user) || !printable(string(token)) {
			return nil, errors.New("the token or its user name cannot be handed to git")
		}
		return append(append([]byte(user), '\n'), token...), nil
	case opSign:
		return s.broker.SignOpenPGP(ctx, req.data)
	}
	return nil, errCredProtocol
}

// printable reports whether s is non-empty and free of control characters,
// so that it fits one line of git's credential protocol.
func printable(s string) bool {
	for _, c := range []byte(s) {
		if c < ' ' || c == 0x7f {
			return false
		}
	}
	return s != ""
}
