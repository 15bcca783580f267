package credenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The credential socket's protocol: how `wharf git-credential` and
// `wharf gpg`, run by git inside a session, ask the Hub for a token or a
// signature. The socket is the session's own (0600, in its 0700 runtime
// folder), so reaching it is the only authentication; what it answers is
// decided by the session's hub.SessionBroker at the moment of the
// request.
//
// One request per connection, then the connection closes:
//
//	request:  "wharf-cred/1 token <host>\n"
//	          "wharf-cred/1 sign <n>\n" followed by exactly n bytes
//	response: "ok <n>\n" followed by exactly n bytes
//	          "no\n"  (nothing is available, whatever the reason)
//
// A token's payload is "<username>\n<token>" (neither holds a line feed:
// credential records refuse them); a signature's is the armored
// signature. The request line is at most maxCredLine bytes, a sign
// payload at most MaxSignBytes, a response payload at most
// maxCredResponse; the server reads the request within credReadTimeout,
// gives the broker credUseTimeout (an approval may be waited for) and
// writes within credWriteTimeout. Refusals never say why: the server
// logs the reason (never a secret), the client reports that nothing was
// available.

// Bounds of the credential protocol.
const (
	// MaxSignBytes bounds what one signature covers: a commit or tag
	// object, headers and message.
	MaxSignBytes     = 8 << 20
	maxCredLine      = 512
	maxCredResponse  = 256 << 10
	credReadTimeout  = 10 * time.Second
	credWriteTimeout = 10 * time.Second
	// credUseTimeout bounds the broker's answer, an owner's approval
	// included; the clients wait a little longer.
	credUseTimeout    = 2 * time.Minute
	credClientTimeout = credUseTimeout + credReadTimeout + credWriteTimeout
	credMagic         = "wharf-cred/1"
)

// The operations of a credential request.
const (
	opToken = "token"
	opSign  = "sign"
)

// credRequest is one parsed request.
type credRequest struct {
	op   string // opToken or opSign
	host string // opToken
	data []byte // opSign
}

var errCredProtocol = errors.New("malformed credential request")

// readCredRequest reads one request from r, bounded as the protocol says.
// It fails on anything else: an unknown version or operation, a line too
// long, a host with a space or control character, a length that is not a
// plain decimal within MaxSignBytes, or a payload cut short.
func readCredRequest(r *bufio.Reader) (credRequest, error) {
	line, err := readCredLine(r)
	if err != nil {
		return credRequest{}, err
	}
	f := strings.Split(line, " ")
	if len(f) != 3 || f[0] != credMagic || f[2] == "" {
		return credRequest{}, errCredProtocol
	}
	switch f[1] {
	case opToken:
		for _, c := range []byte(f[2]) {
			if c <= ' ' || c == 0x7f {
				return credRequest{}, errCredProtocol
			}
		}
		return credRequest{op: opToken, host: f[2]}, nil
	case opSign:
		n, ok := plainLength(f[2], MaxSignBytes)
		if !ok {
			return credRequest{}, errCredProtocol
		}
		// Memory follows the bytes that arrive, not the length announced:
		// a client announcing 8 MiB and sending nothing costs nothing.
		var data bytes.Buffer
		if got, err := data.ReadFrom(io.LimitReader(r, int64(n))); err != nil || got != int64(n) {
			return credRequest{}, fmt.Errorf("%w: %d of %d bytes (%v)", errCredProtocol, got, n, err)
		}
		return credRequest{op: opSign, data: data.Bytes()}, nil
	}
	return credRequest{}, errCredProtocol
}

// writeCredRequest writes req as readCredRequest reads it.
func writeCredRequest(w io.Writer, req credRequest) error {
	var err error
	switch req.op {
	case opToken:
		_, err = fmt.Fprintf(w, "%s %s %s\n", credMagic, opToken, req.host)
	case opSign:
		if _, err = fmt.Fprintf(w, "%s %s %d\n", credMagic, opSign, len(req.data)); err == nil {
			_, err = w.Write(req.data)
		}
	default:
		err = errCredProtocol
	}
	return err
}

// readCredResponse reads the answer: the payload of "ok", or ok false for
// "no". Anything else, or a payload over maxCredResponse, fails.
func readCredResponse(r *bufio.Reader) (payload []byte, ok bool, err error) {
	line, err := readCredLine(r)
	if err != nil {
		return nil, false, err
	}
	if line == "no" {
		return nil, false, nil
	}
	n, good := plainLength(strings.TrimPrefix(line, "ok "), maxCredResponse)
	if !good || !strings.HasPrefix(line, "ok ") {
		return nil, false, errCredProtocol
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return nil, false, fmt.Errorf("%w: %w", errCredProtocol, err)
	}
	return payload, true, nil
}

// readCredLine reads one line of at most maxCredLine bytes, without its
// line feed.
func readCredLine(r *bufio.Reader) (string, error) {
	var b []byte
	for len(b) <= maxCredLine {
		c, err := r.ReadByte()
		if err != nil {
			return "", fmt.Errorf("%w: %w", errCredProtocol, err)
		}
		if c == '\n' {
			return string(b), nil
		}
		b = append(b, c)
	}
	return "", errCredProtocol
}

// plainLength reads a decimal of at most max with no sign, space or
// leading zero.
func plainLength(s string, max int) (int, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n <= max
}
