package gemini

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
)

// The files of Gemini CLI's store, in its folder (~/.gemini).
const (
	// credsFile holds the Google login (an OAuth token set).
	credsFile = "oauth_creds.json"
	// accountsFile caches the Google account's email: {active, old}.
	accountsFile = "google_accounts.json"
	// settingsFile holds the user's settings (JSON with comments), the
	// selected login type among them.
	settingsFile = "settings.json"
)

// MaxFile bounds every file of the store the driver reads.
const MaxFile = 1 << 20

// errNoHome: the environment locates no store.
var errNoHome = errors.New("neither GEMINI_CLI_HOME nor HOME is an absolute folder")

// geminiDir is the folder of Gemini CLI's store that env locates:
// $GEMINI_CLI_HOME/.gemini, else $HOME/.gemini.
func geminiDir(env []string) (string, error) {
	home := driver.Getenv(env, "GEMINI_CLI_HOME")
	if home == "" {
		home = driver.Getenv(env, "HOME")
	}
	if !filepath.IsAbs(home) {
		return "", errNoHome
	}
	return filepath.Join(home, ".gemini"), nil
}

// store is Gemini CLI's folder, read and changed through an os.Root: no
// name leads out of it, whatever links it holds.
type store struct{ dir string }

// open opens the store's folder; a missing folder is (nil, nil).
func (s store) open() (*os.Root, error) {
	root, err := os.OpenRoot(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return root, err
}

// read reads file name of the store, at most MaxFile bytes: a missing
// file is (nil, nil); a larger one, or one that is not a regular file,
// is an error.
func (s store) read(name string) ([]byte, error) {
	root, err := s.open()
	if root == nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New(name + " is not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFile {
		return nil, errors.New(name + " is larger than the driver reads")
	}
	return b, nil
}

// stamp identifies a version of a file: a changed stamp is a file
// written again.
type stamp struct {
	exists bool
	size   int64
	mod    time.Time
	ino    any
}

// stampOf is the stamp of file name of the store.
func (s store) stampOf(name string) stamp {
	root, err := s.open()
	if root == nil || err != nil {
		return stamp{}
	}
	defer root.Close()
	fi, err := root.Lstat(name)
	if err != nil {
		return stamp{}
	}
	return stamp{exists: true, size: fi.Size(), mod: fi.ModTime(), ino: inode(fi)}
}

// loggedIn reports whether creds (oauth_creds.json) hold a Google login:
// a JSON object with a refresh or an access token.
func loggedIn(creds []byte) bool {
	var c struct {
		RefreshToken string `json:"refresh_token"`
		AccessToken  string `json:"access_token"`
	}
	if json.Unmarshal(creds, &c) != nil {
		return false
	}
	return c.RefreshToken != "" || c.AccessToken != ""
}

// accounts is google_accounts.json: the active account and the earlier
// ones, as Gemini CLI keeps them.
type accounts struct {
	Active *string  `json:"active"`
	Old    []string `json:"old"`
}

// parseAccounts reads google_accounts.json; false when it is not one.
func parseAccounts(b []byte) (accounts, bool) {
	var a accounts
	if len(bytes.TrimSpace(b)) == 0 {
		return accounts{Old: []string{}}, true
	}
	if json.Unmarshal(b, &a) != nil {
		return accounts{}, false
	}
	if a.Old == nil {
		a.Old = []string{}
	}
	return a, true
}

// activeEmail is the active account of google_accounts.json when it can
// be shown.
func activeEmail(b []byte) string {
	a, ok := parseAccounts(b)
	if !ok || a.Active == nil {
		return ""
	}
	return shown(*a.Active)
}

// selectedType is the login type settings.json selects
// (security.auth.selectedType; selectedAuthType in its first format),
// "" when none or when the file is not JSON with comments, which Gemini
// CLI then ignores too.
func selectedType(settings []byte) string {
	var s struct {
		Security struct {
			Auth struct {
				SelectedType string `json:"selectedType"`
			} `json:"auth"`
		} `json:"security"`
		SelectedAuthType string `json:"selectedAuthType"`
	}
	if json.Unmarshal(stripComments(settings), &s) != nil {
		return ""
	}
	t := s.Security.Auth.SelectedType
	if t == "" {
		t = s.SelectedAuthType
	}
	return shown(t)
}

// stripComments blanks the comments (// to the line's end, /* to */) of
// JSON with comments, outside strings, as Gemini CLI does before
// parsing its settings.
func stripComments(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			if i < len(b) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return append(out, ' ') // unterminated: the rest is comment
			}
			out = append(out, ' ')
			i += 2 + end + 1
		default:
			out = append(out, c)
		}
	}
	return out
}

// shown is s when it can be shown to people: at most 256 bytes of valid
// UTF-8 with no control character; "" otherwise.
func shown(s string) string {
	if len(s) > 256 || !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return ""
	}
	return s
}

// same reports whether two stamps are of the same version of a file.
func (a stamp) same(b stamp) bool {
	return a.exists == b.exists && a.size == b.size && a.mod.Equal(b.mod) && a.ino == b.ino
}

// removeLogin removes Gemini CLI's Google login as its own logout does:
// oauth_creds.json goes, and google_accounts.json's active account moves
// to its old ones. Nothing else of the store is touched; a missing file
// is no error, and an accounts file that is not Gemini CLI's is left as
// it is.
func (s store) removeLogin() error {
	root, err := s.open()
	if root == nil {
		return err
	}
	defer root.Close()
	if err := root.Remove(credsFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	b, err := s.read(accountsFile)
	if err != nil || b == nil {
		return err
	}
	a, ok := parseAccounts(b)
	if !ok || a.Active == nil {
		return nil
	}
	if !slices.Contains(a.Old, *a.Active) {
		a.Old = append(a.Old, *a.Active)
	}
	a.Active = nil
	out, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	return replace(root, accountsFile, out)
}

// replace writes a file of root anew, by renaming a new file over it, so
// a reader never sees half of it; its mode is kept.
func replace(root *os.Root, name string, data []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := root.Lstat(name); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp := name + ".wharf-" + randomSuffix()
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return nil
}

// randomSuffix names a temporary file no one else picks.
func randomSuffix() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
