package credenv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"time"
)

// MaxCredentialInput bounds what `wharf git-credential` reads of git's
// request.
const MaxCredentialInput = 16 << 10

// errCredentialInput is the refusal of a request that is not git's
// credential protocol; it never quotes the input.
var errCredentialInput = errors.New("invalid credential input")

// gitCredentialRequest is what the helper needs of git's request.
type gitCredentialRequest struct {
	protocol, host string
}

// parseCredentialInput reads git's credential request: "key=value" lines
// up to the first empty line or the end, at most MaxCredentialInput
// bytes. A NUL, a line without "=" or with an empty key fails. Keys other
// than protocol and host (path, username, wwwauth[], capability[] ...)
// are read and ignored; a repeated key keeps its last value, as git does.
func parseCredentialInput(b []byte) (gitCredentialRequest, error) {
	var req gitCredentialRequest
	if len(b) > MaxCredentialInput {
		return req, errors.New("credential input exceeds the size limit")
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return req, errCredentialInput
	}
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			break
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || key == "" {
			return gitCredentialRequest{}, errCredentialInput
		}
		switch key {
		case "protocol":
			req.protocol = value
		case "host":
			req.host = value
		}
	}
	return req, nil
}

// RunGitCredential is `wharf git-credential <action>`, the credential
// helper git runs in a workspace session (the projection names it for
// each host given an HTTPS token). For "get" it reads git's request from
// stdin and, when it is for https and a host, asks the session's
// credential socket (found through CredentialsEnv in getenv) and prints
// "username=…" and "password=…" lines; when nothing is available it
// prints nothing, so git goes on without. "store", "erase" and unknown
// actions are read and ignored: the Hub keeps the tokens. The token goes
// to stdout only, never to stderr nor into an error.
func RunGitCredential(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) != 1 {
		return errors.New("usage: wharf git-credential get|store|erase")
	}
	in, err := io.ReadAll(io.LimitReader(stdin, MaxCredentialInput+1))
	if err != nil {
		return fmt.Errorf("reading git's request: %w", err)
	}
	if args[0] != "get" {
		return nil
	}
	req, err := parseCredentialInput(in)
	if err != nil {
		return err
	}
	if req.protocol != "https" || req.host == "" || strings.ContainsAny(req.host, "/@ \t") {
		return nil
	}
	dir := getenv(CredentialsEnv)
	if dir == "" {
		fmt.Fprintln(stderr, "wharf git-credential: not in a Wharf workspace session; no credential offered")
		return nil
	}
	payload, ok, err := askCredentials(ctx, dir, credRequest{op: opToken, host: req.host})
	if err != nil {
		return err
	}
	if !ok {
		return nil
	}
	defer clear(payload)
	user, token, found := bytes.Cut(payload, []byte{'\n'})
	if !found || len(user) == 0 || len(token) == 0 || bytes.ContainsAny(token, "\r\n\x00") {
		return errors.New("the session's answer was malformed")
	}
	var out bytes.Buffer
	out.Grow(len(payload) + 32)
	fmt.Fprintf(&out, "username=%s\npassword=%s\n\n", user, token)
	_, err = stdout.Write(out.Bytes())
	clear(out.Bytes())
	return err
}

// askCredentials sends req to the credential socket in dir and returns
// the payload of an "ok" answer, ok false for "no". It is bounded by
// credClientTimeout and ctx.
func askCredentials(ctx context.Context, dir string, req credRequest) (payload []byte, ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, credClientTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", filepath.Join(dir, credSockName))
	if err != nil {
		return nil, false, errors.New("the session's credential socket is not reachable (has the session ended?)")
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	_ = c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	w := bufio.NewWriter(c)
	if err := writeCredRequest(w, req); err != nil {
		return nil, false, err
	}
	if err := w.Flush(); err != nil {
		return nil, false, errors.New("the session's credential socket closed the request")
	}
	payload, ok, err = readCredResponse(bufio.NewReader(c))
	if err != nil {
		return nil, false, errors.New("the session's credential socket gave no answer")
	}
	return payload, ok, nil
}

// Sign asks the credential socket in dir for a detached, armored
// signature of data (at most MaxSignBytes) with the signing key lent:
// the signature, or ok false when none is available. It is `wharf gpg`'s
// request.
func Sign(ctx context.Context, dir string, data []byte) (sig []byte, ok bool, err error) {
	return askCredentials(ctx, dir, credRequest{op: opSign, data: data})
}
