package docfeed

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// z joins records the way -z output terminates them.
func z(recs ...string) []byte { return []byte(strings.Join(recs, "\x00") + "\x00") }

func TestParseStatus(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	zero := "0000000000000000000000000000000000000000"
	out := z(
		"# branch.oid 1234567890abcdef1234567890abcdef12345678",
		"# branch.head feature/x",
		"# branch.upstream origin/feature/x",
		"# branch.ab +2 -1",
		"1 .M N... 100644 100644 100644 "+zero+" "+zero+" with space.md",
		"1 A. N... 000000 100644 100644 "+zero+" "+zero+" added.md",
		"1 .D N... 100644 100644 000000 "+zero+" "+zero+" gone.md",
		"2 R. N... 100644 100644 100644 "+zero+" "+zero+" R100 new name.md", "old name.md",
		"u UU N... 100644 100644 100644 100644 "+zero+" "+zero+" "+zero+" conflict.md",
		"? untracked file.md",
	)
	r, err := parseStatus(out)
	is.NoErr(err)                                               // parsed
	is.Equal(r.oid, "1234567890abcdef1234567890abcdef12345678") // head
	is.Equal(r.branch, "feature/x")                             // branch
	is.Equal(r.upstream, "origin/feature/x")                    // upstream
	is.True(r.hasAB && r.ahead == 2 && r.behind == 1)           // ahead and behind
	var got []string
	for _, e := range r.entries {
		got = append(got, e.path+"|"+e.oldPath+"|"+e.word())
	}
	want := []string{
		"with space.md||modified", "added.md||added", "gone.md||deleted",
		"new name.md|old name.md|renamed", "conflict.md||unmerged", "untracked file.md||untracked",
	}
	is.Equal(got, want) // entries with paths intact

	t.Run("initial and detached", func(t *testing.T) {
		is := is.New(t)
		r, err := parseStatus(z("# branch.oid (initial)", "# branch.head (detached)"))
		is.NoErr(err)       // parsed
		is.Equal(r.oid, "") // no commit
		is.True(r.detached) // detached
	})
	t.Run("garbage is refused", func(t *testing.T) {
		is := is.New(t)
		for _, bad := range [][]byte{z("1 short"), z("x what"), z("2 R. N... 1 2 3 a b R100 path")} {
			_, err := parseStatus(bad)
			is.True(err != nil) // refused, not guessed
		}
	})
}

func TestParseDiff(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	out := z(
		":100644 100644 aaaa bbbb M", ":odd name.md",
		":100644 100644 aaaa bbbb R090", "old.md", "new.md",
		":100644 000000 aaaa 0000 D", "gone.md",
		"3\t1\t:odd name.md",
		"2\t0\t", "old.md", "new.md",
		"-\t-\tgone.md",
	)
	d, err := parseDiff(out)
	is.NoErr(err)                                  // parsed
	is.Equal(d[":odd name.md"].status, "modified") // a path starting with ':' is a path
	is.Equal(*d[":odd name.md"].additions, 3)      // counted
	is.Equal(d["new.md"].status, "renamed")        // rename
	is.Equal(d["new.md"].oldPath, "old.md")        // from
	is.Equal(*d["new.md"].additions, 2)            // counted under the new name
	is.Equal(d["gone.md"].status, "deleted")       // deleted
	is.True(d["gone.md"].additions == nil)         // binary: not counted
	is.Equal(len(d), 3)                            // three paths
}

func TestParseLog(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	now := time.Unix(1_000_100, 0)
	out := z(
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaa", "Ann", "1000000", "Subject one", "Body\n\nmore\n",
		"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "bbbbbbb", "", "999000", "Two", "",
	)
	log, _ := parseLog(out, now)
	is.Equal(len(log), 2)                                // two commits
	is.Equal(log[0].Sha, "aaaaaaa")                      // short id
	is.Equal(*log[0].Author, "Ann")                      // author
	is.Equal(log[0].Subject, "Subject one")              // subject
	is.Equal(log[0].Message, "Body\n\nmore")             // body without the final newline
	is.Equal(log[0].CommittedAtMs, int64(1_000_000_000)) // ms from %ct
	is.Equal(*log[0].RelativeTime, "2 minutes ago")      // computed, not %cr
	is.True(log[1].Author == nil)                        // no author name: null

	t.Run("misaligned records stop the log", func(t *testing.T) {
		is := is.New(t)
		bad := z("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaa", "Ann", "1000000", "S", "B",
			"zzz", "y", "x", "w", "v", "u")
		good, _ := parseLog(bad, now)
		is.Equal(len(good), 1) // the good commit only
	})
}
