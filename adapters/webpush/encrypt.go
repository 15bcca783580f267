package webpush

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
)

// The aes128gcm body (RFC 8188) of one Web Push message (RFC 8291):
//
//	salt (16) | rs (4, big endian) | idlen (1) = 65 | keyid = the sender's ephemeral public key (65)
//	one record: AES-128-GCM(payload | 0x02) with its 16-byte tag
//
// where 0x02 is the delimiter of the last record and no padding follows
// it. The keys come from the ECDH of the ephemeral key with the
// subscriber's and from the subscriber's auth secret:
//
//	IKM   = HKDF(salt: auth, ikm: ECDH, info: "WebPush: info\0" | ua_public | as_public, 32)
//	PRK   = HKDF-Extract(salt, IKM)
//	CEK   = HKDF-Expand(PRK, "Content-Encoding: aes128gcm\0", 16)
//	NONCE = HKDF-Expand(PRK, "Content-Encoding: nonce\0", 12)
const (
	saltSize   = 16
	pointSize  = 65 // an uncompressed P-256 point
	headerSize = saltSize + 4 + 1 + pointSize
	tagSize    = 16
	// recordSize is the rs the body declares: 4,096, the whole body a
	// push service is obliged to take.
	recordSize = 4096
	authSize   = 16

	// MaxPayload is the largest payload one message carries: what fits
	// a 4,096-byte body beside the header, the tag and the delimiter.
	MaxPayload = recordSize - headerSize - tagSize - 1
)

// sender is what one message is encrypted with: a fresh key pair and
// salt, never used twice.
type sender struct {
	key  *ecdh.PrivateKey
	salt [saltSize]byte
}

// newSender makes the sender of one message. crypto/rand never fails
// (it crashes the program instead), and neither does key generation over
// it.
func newSender() (sender, error) {
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return sender{}, err
	}
	s := sender{key: k}
	rand.Read(s.salt[:])
	return s, nil
}

// encrypt returns the aes128gcm body carrying payload (at most
// MaxPayload bytes) to the subscriber whose public key is ua and whose
// auth secret is auth, encrypted by s.
func encrypt(s sender, ua *ecdh.PublicKey, auth, payload []byte) ([]byte, error) {
	secret, err := s.key.ECDH(ua)
	if err != nil {
		return nil, err
	}
	defer clear(secret)
	asPublic := s.key.PublicKey().Bytes()

	info := make([]byte, 0, len("WebPush: info\x00")+2*pointSize)
	info = append(info, "WebPush: info\x00"...)
	info = append(info, ua.Bytes()...)
	info = append(info, asPublic...)
	ikm, err := hkdf.Key(sha256.New, secret, auth, string(info), 32)
	if err != nil {
		return nil, err
	}
	defer clear(ikm)
	prk, err := hkdf.Extract(sha256.New, ikm, s.salt[:])
	if err != nil {
		return nil, err
	}
	defer clear(prk)
	cek, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	defer clear(cek)
	nonce, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}

	body := make([]byte, headerSize, headerSize+len(payload)+1+tagSize)
	copy(body, s.salt[:])
	binary.BigEndian.PutUint32(body[saltSize:], recordSize)
	body[saltSize+4] = pointSize
	copy(body[saltSize+5:], asPublic)
	// The record is sealed in place, right after the header.
	record := append(body[headerSize:], payload...)
	record = append(record, 0x02)
	return gcm.Seal(body, nonce, record, nil), nil
}
