package service

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// PasswordParams are the argon2id cost parameters used for new password
// hashes. Existing hashes are verified with the parameters stored in them.
type PasswordParams struct {
	Memory  uint32 // KiB
	Time    uint32 // passes
	Threads uint8
}

// DefaultPasswordParams are OWASP's minimum recommendation for argon2id
// (19 MiB, 2 passes, 1 lane): about 30 ms per hash on a small server.
var DefaultPasswordParams = PasswordParams{Memory: 19 * 1024, Time: 2, Threads: 1}

const (
	saltLen = 16
	keyLen  = 32
	// Bounds on parameters read back from a stored hash, so a damaged or
	// hostile record cannot make one verification exhaust the machine.
	maxMemory  = 1 << 20 // 1 GiB
	maxTime    = 16
	maxThreads = 16
)

var b64 = base64.RawStdEncoding

// hashPassword returns the PHC string of an argon2id hash of password.
func hashPassword(p PasswordParams, password string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.Memory, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// unmatchableHash returns a PHC string with p's cost whose key is random
// bytes rather than the hash of any password. Verifying a password against
// it costs one real argon2id run and never succeeds, which is what a login
// for an unknown name needs; making it costs no hashing at all.
func unmatchableHash(p PasswordParams) (string, error) {
	raw := make([]byte, saltLen+keyLen)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(raw[:saltLen]), b64.EncodeToString(raw[saltLen:])), nil
}

// verifyPassword reports whether password matches the PHC string phc. A
// malformed hash never matches and never panics.
func verifyPassword(phc, password string) bool {
	p, salt, key, ok := parsePHC(phc)
	if !ok {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1
}

func parsePHC(phc string) (p PasswordParams, salt, key []byte, ok bool) {
	parts := strings.Split(phc, "$")
	// "", "argon2id", "v=19", "m=..,t=..,p=..", salt, key
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return p, nil, nil, false
	}
	var m, t, th uint64
	for _, kv := range strings.Split(parts[3], ",") {
		k, v, found := strings.Cut(kv, "=")
		if !found {
			return p, nil, nil, false
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return p, nil, nil, false
		}
		switch k {
		case "m":
			m = n
		case "t":
			t = n
		case "p":
			th = n
		default:
			return p, nil, nil, false
		}
	}
	if m == 0 || m > maxMemory || t == 0 || t > maxTime || th == 0 || th > maxThreads {
		return p, nil, nil, false
	}
	salt, err1 := b64.DecodeString(parts[4])
	key, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) < 8 || len(key) < 16 {
		return p, nil, nil, false
	}
	return PasswordParams{Memory: uint32(m), Time: uint32(t), Threads: uint8(th)}, salt, key, true
}
