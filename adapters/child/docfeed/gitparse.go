package docfeed

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Parsers of git's machine formats. Each refuses what it does not
// recognise rather than guess, and none keeps file contents.

// statusReport is `git status --porcelain=v2 --branch -z`.
type statusReport struct {
	oid      string // HEAD's id; "" before the first commit
	branch   string // "" when detached
	detached bool
	upstream string
	ahead    int
	behind   int
	hasAB    bool
	entries  []statusEntry
}

// statusEntry is one changed path of the report.
type statusEntry struct {
	kind    byte   // '1' ordinary, '2' renamed or copied, 'u' unmerged, '?' untracked
	xy      string // index and work-tree status letters ("??" when untracked)
	path    string
	oldPath string // for kind '2'
}

// parseStatus reads porcelain v2 with -z: NUL-terminated records, a
// renamed entry's original path in the record after it.
func parseStatus(out []byte) (statusReport, error) {
	var r statusReport
	recs := splitNUL(out)
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		bad := fmt.Errorf("git status: unrecognised record %d", i)
		if len(rec) < 2 || rec[1] != ' ' {
			return r, bad
		}
		switch rec[0] {
		case '#':
			name, value, _ := strings.Cut(rec[2:], " ")
			switch name {
			case "branch.oid":
				if value != "(initial)" {
					r.oid = value
				}
			case "branch.head":
				if value == "(detached)" {
					r.detached = true
				} else {
					r.branch = value
				}
			case "branch.upstream":
				r.upstream = value
			case "branch.ab":
				a, b, ok := strings.Cut(value, " ")
				ahead, err1 := strconv.Atoi(strings.TrimPrefix(a, "+"))
				behind, err2 := strconv.Atoi(strings.TrimPrefix(b, "-"))
				if ok && err1 == nil && err2 == nil {
					r.ahead, r.behind, r.hasAB = ahead, behind, true
				}
			}
		case '1':
			f := strings.SplitN(rec, " ", 9)
			if len(f) != 9 {
				return r, bad
			}
			r.entries = append(r.entries, statusEntry{kind: '1', xy: f[1], path: f[8]})
		case '2':
			f := strings.SplitN(rec, " ", 10)
			if len(f) != 10 || i+1 >= len(recs) {
				return r, bad
			}
			i++
			r.entries = append(r.entries, statusEntry{kind: '2', xy: f[1], path: f[9], oldPath: recs[i]})
		case 'u':
			f := strings.SplitN(rec, " ", 11)
			if len(f) != 11 {
				return r, bad
			}
			r.entries = append(r.entries, statusEntry{kind: 'u', xy: f[1], path: f[10]})
		case '?':
			r.entries = append(r.entries, statusEntry{kind: '?', xy: "??", path: rec[2:]})
		case '!':
			// Ignored entries are not asked for; skip them if a config adds them.
		default:
			return r, bad
		}
	}
	return r, nil
}

// word names an entry's change against HEAD.
func (e statusEntry) word() string {
	switch e.kind {
	case '?':
		return "untracked"
	case 'u':
		return "unmerged"
	}
	x, y := e.xy[0], e.xy[len(e.xy)-1]
	switch {
	case x == 'R':
		return "renamed"
	case x == 'C':
		return "copied"
	case x == 'D' || y == 'D':
		return "deleted"
	case x == 'A':
		return "added"
	case x == 'T' || y == 'T':
		return "type-changed"
	}
	return "modified"
}

// diffEntry is one path of `git diff --raw --numstat -z`.
type diffEntry struct {
	path, oldPath      string
	status             string // "" when only numstat was asked for
	additions, deletes *int   // nil for binary files
}

// parseDiff reads `git diff -z` output made of --raw records, --numstat
// records or both (raw first), keyed by path. A raw record is
// ":modes ids STATUS" then one path, or two for a rename or copy; a numstat
// record is "ADDED\tDELETED\tPATH", or "ADDED\tDELETED\t" then the old and
// new paths. Paths follow their headers positionally, so a path that
// starts with ':' cannot be mistaken for a header.
func parseDiff(out []byte) (map[string]*diffEntry, error) {
	recs := splitNUL(out)
	byPath := map[string]*diffEntry{}
	get := func(p string) *diffEntry {
		e := byPath[p]
		if e == nil {
			e = &diffEntry{path: p}
			byPath[p] = e
		}
		return e
	}
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if strings.HasPrefix(rec, ":") {
			f := strings.Fields(rec)
			if len(f) != 5 || f[4] == "" || i+1 >= len(recs) {
				return nil, errors.New("git diff: unrecognised raw record")
			}
			letter := f[4][:1]
			old := ""
			if letter == "R" || letter == "C" {
				if i+2 >= len(recs) {
					return nil, errors.New("git diff: truncated rename record")
				}
				old = recs[i+1]
				i++
			}
			i++
			e := get(recs[i])
			e.status, e.oldPath = diffWord(letter), old
			continue
		}
		f := strings.SplitN(rec, "\t", 3)
		if len(f) != 3 {
			return nil, errors.New("git diff: unrecognised numstat record")
		}
		p := f[2]
		if p == "" { // a rename: old and new paths follow
			if i+2 >= len(recs) {
				return nil, errors.New("git diff: truncated numstat rename")
			}
			p = recs[i+2]
			i += 2
		}
		e := get(p)
		if a, err := strconv.Atoi(f[0]); err == nil {
			e.additions = &a
		}
		if d, err := strconv.Atoi(f[1]); err == nil {
			e.deletes = &d
		}
	}
	return byPath, nil
}

// diffWord names a raw status letter like statusEntry.word does.
func diffWord(letter string) string {
	switch letter {
	case "A":
		return "added"
	case "D":
		return "deleted"
	case "R":
		return "renamed"
	case "C":
		return "copied"
	case "T":
		return "type-changed"
	case "U":
		return "unmerged"
	}
	return "modified"
}

// logFields is the --format of the commit log: full id, short id, author
// name, committer time (Unix seconds), subject and body, NUL-separated;
// with -z every commit is NUL-terminated too, so a commit is exactly
// logFieldCount records. Ages are computed here, never read from %cr.
const (
	logFields     = "--format=%H%x00%h%x00%an%x00%ct%x00%s%x00%b"
	logFieldCount = 6
)

// parseLog reads the commit log, newest first, and the commits' full ids. A message containing a NUL
// (which git refuses to create, but an imported history may hold) would
// shift the records; parsing stops at the first commit that does not look
// like one rather than misattribute fields.
func parseLog(out []byte, now time.Time) ([]commitLogEntry, []string) {
	recs := splitNUL(out)
	log, fulls := []commitLogEntry{}, []string{}
	for i := 0; i+logFieldCount <= len(recs); i += logFieldCount {
		f := recs[i : i+logFieldCount]
		// -z separates commits with a NUL but a body ends with newlines
		// of its own; the next commit's id may carry a leading newline.
		full := strings.TrimLeft(f[0], "\n")
		ct, err := strconv.ParseInt(f[3], 10, 64)
		if !isHex(full) || !isHex(f[1]) || err != nil {
			break
		}
		e := commitLogEntry{
			Sha:           f[1],
			Subject:       f[4],
			Message:       strings.TrimRight(f[5], "\n"),
			CommittedAtMs: ct * 1000,
			RelativeTime:  ptr(RelativeTime(time.Unix(ct, 0), now)),
		}
		if f[2] != "" {
			e.Author = ptr(f[2])
		}
		log, fulls = append(log, e), append(fulls, full)
	}
	return log, fulls
}

func isHex(s string) bool {
	if len(s) < 4 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
