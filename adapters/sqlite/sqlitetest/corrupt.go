// Package sqlitetest holds what tests of several packages do to a Wharf
// database file from outside: damage it the way a bad sector would.
package sqlitetest

import (
	"database/sql"
	"encoding/binary"
	"os"
	"strings"
	"testing"

	"github.com/matryer/is"

	_ "modernc.org/sqlite" // the driver the sql package opens the file with
)

// CorruptIndex flips one bit of text on the root page of the index named
// index in the database file at path (checkpointed first, so the page is
// in the main file), so that index no longer matches its table: the
// damage a bad sector or a stray write leaves, which VACUUM INTO copies
// as it is and PRAGMA integrity_check reports. The database must be
// closed by everyone else.
func CorruptIndex(t testing.TB, path, index, text string) {
	t.Helper()
	is := is.New(t)
	db, err := sql.Open("sqlite", path)
	is.NoErr(err) // open to find the index
	var root int
	is.NoErr(db.QueryRow(`SELECT rootpage FROM sqlite_schema WHERE name = ?`, index).Scan(&root)) // its root page
	_, err = db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	is.NoErr(err)        // everything in the main file
	is.NoErr(db.Close()) // closed
	data, err := os.ReadFile(path)
	is.NoErr(err) // the file
	size := int(binary.BigEndian.Uint16(data[16:18]))
	page := data[(root-1)*size : root*size]
	at := strings.Index(string(page), text)
	is.True(at >= 0)          // the text is on the index's root page
	page[at+len(text)-1] ^= 1 // one bit flipped in it
	is.NoErr(os.WriteFile(path, data, 0o600))
}
