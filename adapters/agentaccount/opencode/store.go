package opencode

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
)

// OpenCode's store of saved logins is one JSON file, auth.json in its data
// directory ($XDG_DATA_HOME/opencode, else ~/.local/share/opencode): an
// object from provider id to {type: api, key} | {type: oauth, refresh,
// access, expires, …} | {type: wellknown, key, token}. One login per
// provider. The server has no route that lists it, so the driver reads
// the file itself, read-only, bounded, keeping only ids and types: the
// secrets in it are read past by the parser, never kept.
//
// When OPENCODE_AUTH_CONTENT is set (to a JSON object), OpenCode reads its
// logins from that variable instead and ignores the file.

// authContentVar is the variable OpenCode reads its logins from when set.
const authContentVar = "OPENCODE_AUTH_CONTENT"

// maxStore bounds the store's bytes.
const maxStore = 1 << 20

// maxSaved bounds the logins read from the store.
const maxSaved = 1024

// savedLogin is one login of the store.
type savedLogin struct {
	Provider string
	Type     string // api, oauth or wellknown
}

// store is the logins OpenCode uses and where they come from.
type store struct {
	Logins []savedLogin // sorted by provider
	// FromEnv: the logins come from OPENCODE_AUTH_CONTENT, which the Hub
	// cannot change (a login would land in a file OpenCode ignores).
	FromEnv bool
}

// storePath is the store file the environment env locates, as OpenCode
// finds it; "" when env names no home.
func storePath(env []string) string {
	data := driver.Getenv(env, "XDG_DATA_HOME")
	if !filepath.IsAbs(data) { // unset or relative: the XDG default
		home := driver.Getenv(env, "HOME")
		if !filepath.IsAbs(home) {
			return ""
		}
		data = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(data, "opencode", "auth.json")
}

// readStore reads the logins OpenCode uses in environment env. A missing
// file is an empty store.
func readStore(env []string) (store, error) {
	if content := driver.Getenv(env, authContentVar); content != "" {
		// OpenCode falls back to the file when the variable is not JSON,
		// and uses no login when it is JSON but not an object.
		logins, err := parseStore(strings.NewReader(content), maxStore)
		if !errors.Is(err, errNotJSON) {
			return store{Logins: logins, FromEnv: true}, nil
		}
	}
	path := storePath(env)
	if path == "" {
		return store{}, nil
	}
	// Non-blocking: a FIFO planted there must not hang the status.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return store{}, nil
	}
	if err != nil {
		return store{}, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return store{}, errors.New("the store is not a regular file")
	}
	logins, err := parseStore(f, maxStore)
	if errors.Is(err, errNotJSON) {
		return store{}, nil // OpenCode reads no login from it either
	}
	return store{Logins: logins}, err
}

// errNotJSON is a store that does not parse: OpenCode treats it as empty.
var errNotJSON = errors.New("the store is not JSON")

// parseStore reads a store's logins from r (at most limit bytes): the
// entries OpenCode itself accepts (its schema: the type and that type's
// required members), sorted by provider. Secrets are read past, never
// kept. A value that is not an object yields no login; text that is
// not JSON is errNotJSON; an answer over the bound is errTooLarge.
func parseStore(r io.Reader, limit int64) ([]savedLogin, error) {
	w := newWalker(&limitReader{r: r, n: limit})
	var out []savedLogin
	err := w.eachMember(func(id string) error {
		typ, err := readEntry(w)
		if err != nil {
			return err
		}
		if typ != "" && validID(id) && len(out) < maxSaved {
			out = append(out, savedLogin{Provider: id, Type: typ})
		}
		return nil
	})
	switch {
	case errors.Is(err, errTooLarge):
		return nil, err
	case errors.Is(err, errShape):
		return nil, endStore(w)
	case err != nil:
		return nil, errNotJSON
	}
	if err := endStore(w); err != nil {
		return nil, err
	}
	// The last of a repeated id wins, as in JavaScript.
	byID := map[string]string{}
	for _, l := range out {
		byID[l.Provider] = l.Type
	}
	out = out[:0]
	for id, typ := range byID {
		out = append(out, savedLogin{Provider: id, Type: typ})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Provider < out[j].Provider })
	return out, nil
}

// endStore checks the end of a store: only white space may follow.
func endStore(w *walker) error {
	if err := w.end(); err != nil {
		return errNotJSON
	}
	return nil
}

// readEntry reads one store entry and returns its type when OpenCode
// would accept it, else "". Only the type and the presence and kind of
// the required members are looked at.
func readEntry(w *walker) (string, error) {
	var typ string
	has := map[string]byte{}
	err := w.eachMember(func(name string) error {
		if name == "type" {
			s, _, err := w.readString()
			typ = s
			return err
		}
		switch name {
		case "key", "token", "refresh", "access", "expires":
			tok, err := w.peek()
			if err != nil {
				return err
			}
			switch tok.(type) {
			case string:
				has[name] = '"'
			case json.Number:
				has[name] = '0'
			}
		}
		return w.skip()
	})
	if err != nil {
		return "", skipShape(err)
	}
	str := func(names ...string) bool {
		for _, n := range names {
			if has[n] != '"' {
				return false
			}
		}
		return true
	}
	switch {
	case typ == "api" && str("key"),
		typ == "oauth" && str("refresh", "access") && has["expires"] == '0',
		typ == "wellknown" && str("key", "token"):
		return typ, nil
	}
	return "", nil
}
