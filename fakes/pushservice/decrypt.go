package pushservice

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// Decrypt opens an aes128gcm body (RFC 8188) as the browser whose key is
// ua and whose auth secret is auth does (RFC 8291), returning the
// payload. It takes what a browser takes: any record size of at least
// 18, any number of records (each but the last ends with the delimiter
// 0x01, the last with 0x02, then zero padding), and refuses anything
// else. It is written from the receiver's side with HMAC alone, apart
// from the sender's code, so the two check each other.
func Decrypt(ua *ecdh.PrivateKey, auth, body []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, errors.New("the body is shorter than its header")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if rs < 18 {
		return nil, fmt.Errorf("record size %d is below 18", rs)
	}
	if idlen != 65 || len(body) < 21+idlen {
		return nil, fmt.Errorf("the key id is %d bytes, not a 65-byte P-256 point", idlen)
	}
	as, err := ecdh.P256().NewPublicKey(body[21 : 21+idlen])
	if err != nil {
		return nil, errors.New("the key id is not a P-256 point")
	}
	shared, err := ua.ECDH(as)
	if err != nil {
		return nil, err
	}

	// RFC 8291 §3.3-3.4 as HMAC steps; each single-block HKDF-Expand is
	// HMAC(PRK, info | 0x01).
	mac := func(key []byte, parts ...[]byte) []byte {
		h := hmac.New(sha256.New, key)
		for _, p := range parts {
			h.Write(p)
		}
		return h.Sum(nil)
	}
	prkKey := mac(auth, shared)
	ikm := mac(prkKey, []byte("WebPush: info\x00"), ua.PublicKey().Bytes(), as.Bytes(), []byte{1})
	prk := mac(salt, ikm)
	cek := mac(prk, []byte("Content-Encoding: aes128gcm\x00\x01"))[:16]
	nonce := mac(prk, []byte("Content-Encoding: nonce\x00\x01"))[:12]

	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	var out []byte
	data := body[21+idlen:]
	if len(data) == 0 {
		return nil, errors.New("the body has no record")
	}
	for seq := uint64(0); len(data) > 0; seq++ { // at most len(body)/18 records
		n := len(data)
		if uint64(rs) < uint64(n) {
			n = int(rs)
		}
		rec := data[:n]
		data = data[n:]
		if len(rec) < gcm.Overhead()+1 {
			return nil, fmt.Errorf("record %d is too short", seq)
		}
		iv := make([]byte, 12)
		copy(iv, nonce)
		var s [8]byte
		binary.BigEndian.PutUint64(s[:], seq)
		for i := range s {
			iv[4+i] ^= s[i]
		}
		plain, err := gcm.Open(nil, iv, rec, nil)
		if err != nil {
			return nil, fmt.Errorf("record %d does not decrypt", seq)
		}
		i := len(plain) - 1
		for i >= 0 && plain[i] == 0 {
			i--
		}
		want := byte(1)
		if len(data) == 0 {
			want = 2
		}
		if i < 0 || plain[i] != want {
			return nil, fmt.Errorf("record %d lacks its delimiter %d", seq, want)
		}
		out = append(out, plain[:i]...)
	}
	return out, nil
}
