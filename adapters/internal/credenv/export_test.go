package credenv

import (
	"bufio"
	"bytes"
)

// Exported for the tests of the projection's parts.
var (
	KeepUserSetting      = keepUserSetting
	ParseCredentialInput = func(b []byte) (protocol, host string, err error) {
		r, err := parseCredentialInput(b)
		return r.protocol, r.host, err
	}
)

// CredRequest is a credential socket request, for the tests.
type CredRequest struct {
	Op, Host string
	Data     []byte
}

// ReadCredRequest reads one request as the credential socket does.
func ReadCredRequest(b []byte) (CredRequest, error) {
	r, err := readCredRequest(bufio.NewReader(bytes.NewReader(b)))
	return CredRequest{Op: r.op, Host: r.host, Data: r.data}, err
}

// WriteCredRequest writes a request as the clients do.
func WriteCredRequest(req CredRequest) []byte {
	var b bytes.Buffer
	_ = writeCredRequest(&b, credRequest{op: req.Op, host: req.Host, data: req.Data})
	return b.Bytes()
}
