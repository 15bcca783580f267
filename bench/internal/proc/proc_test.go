package proc

import (
	"testing"

	"github.com/matryer/is"
)

func TestStatAndStatusLinesAreRead(t *testing.T) {
	is := is.New(t)
	ppid, ticks, err := ParseStat([]byte("42 (wharf (x) y) S 7 42 42 0 -1 4194560 100 0 0 0 12 30 5 3 20 0 9 0 100 0 0\n"))
	is.NoErr(err)              // a command with spaces and parentheses
	is.Equal(ppid, 7)          // the parent
	is.Equal(ticks, int64(50)) // user and system, its own and its children's
	rss, err := ParseVmRSS([]byte("Name:\twharf\nVmPeak:\t  9 kB\nVmRSS:\t   13936 kB\nRssAnon:\t 1 kB\n"))
	is.NoErr(err)
	is.Equal(rss, int64(13936<<10)) // in bytes
	_, err = ParseVmRSS([]byte("Name:\tzombie\n"))
	is.True(err != nil) // none
	peak, err := ParseStatusBytes([]byte("Name:\twharf\nVmHWM:\t   20000 kB\nVmRSS:\t   13936 kB\n"), "VmHWM")
	is.NoErr(err)
	is.Equal(peak, int64(20000<<10)) // any field given in kB
}
