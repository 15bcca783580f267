package service

import (
	"testing"

	"github.com/matryer/is"
)

func TestUnmatchableHash(t *testing.T) {
	is := is.New(t)
	p := PasswordParams{Memory: 64, Time: 2, Threads: 1}
	phc, err := unmatchableHash(p)
	is.NoErr(err)
	got, salt, key, ok := parsePHC(phc)
	is.True(ok)                                         // a well-formed hash, so verifying it runs argon2id
	is.Equal(got, p)                                    // at exactly the configured cost
	is.True(len(salt) == saltLen && len(key) == keyLen) // with a full salt and key
	for _, pw := range []string{"", "password", "wharf dummy password"} {
		is.True(!verifyPassword(phc, pw)) // and no password matches it
	}
	other, err := unmatchableHash(p)
	is.NoErr(err)
	is.True(other != phc) // each Hub gets its own
}
