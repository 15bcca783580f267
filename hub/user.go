package hub

import (
	"time"
	"unicode/utf8"
)

// User is a person who may log in to the Hub. Every user has the same
// powers: they share the daemon's OS user, so the Hub has no roles.
type User struct {
	Name         string
	PasswordHash string // argon2id PHC string; never leaves the core
	CreatedAt    time.Time
}

// Limits on user names and passwords.
const (
	MaxUserNameLen    = 64   // bytes
	MinPasswordLen    = 8    // characters, for passwords the Hub sets
	MaxPasswordLen    = 1024 // bytes; longer input is refused before hashing
	MaxDeviceLabelLen = 64   // characters
)

// ValidateUserName checks the rule for user names: 1 to 64 ASCII letters,
// digits, '.', '_' or '-', starting with a letter or digit.
func ValidateUserName(name string) error {
	if name == "" {
		return Errorf(Invalid, "user name is required")
	}
	if len(name) > MaxUserNameLen {
		return Errorf(Invalid, "user name is longer than %d characters", MaxUserNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return Errorf(Invalid, "user name may hold only letters, digits, '.', '_' and '-', and must start with a letter or digit")
		}
	}
	return nil
}

// ValidatePassword checks the rule for passwords the Hub is asked to set:
// valid UTF-8, at least 8 characters, at most 1024 bytes.
func ValidatePassword(password string) error {
	if !utf8.ValidString(password) {
		return Errorf(Invalid, "password is not valid UTF-8")
	}
	if utf8.RuneCountInString(password) < MinPasswordLen {
		return Errorf(Invalid, "password must have at least %d characters", MinPasswordLen)
	}
	if len(password) > MaxPasswordLen {
		return Errorf(Invalid, "password is longer than %d bytes", MaxPasswordLen)
	}
	return nil
}
