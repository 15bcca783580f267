package webpush

import (
	"crypto/ecdh"
	"time"
)

// SetSendTimeout replaces the 10 s a push may take.
func SetSendTimeout(p *Pusher, d time.Duration) { p.timeout = d }

// UseSender makes every push of p encrypt with the private key key and
// the salt salt, as the RFC 8291 example does.
func UseSender(p *Pusher, key, salt []byte) error {
	k, err := ecdh.P256().NewPrivateKey(key)
	if err != nil {
		return err
	}
	s := sender{key: k}
	copy(s.salt[:], salt)
	p.newSender = func() (sender, error) { return s, nil }
	return nil
}
