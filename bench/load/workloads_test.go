package main

import (
	"context"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestParseProcStat(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       procStat
		bad        bool
	}{
		{"plain", "4242 (wharf) S 17 4242 17 0 -1", procStat{PID: 4242, Comm: "wharf", State: 'S', PPID: 17}, false},
		{"zombie", "9 (git) Z 1 9 9 0 -1", procStat{PID: 9, Comm: "git", State: 'Z', PPID: 1}, false},
		{"spaces and parentheses in the name", "7 (a) b (c)) R 3 7 7", procStat{PID: 7, Comm: "a) b (c)", State: 'R', PPID: 3}, false},
		{"no name", "7 R 3", procStat{}, true},
		{"no ppid", "7 (x) R", procStat{}, true},
		{"bad pid", "x (y) R 3", procStat{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := parseProcStat(tc.line)
			if tc.bad {
				is.True(err != nil) // a malformed line is refused
				return
			}
			is.NoErr(err)          // a well-formed line parses
			is.Equal(got, tc.want) // every field is read from after the last ')'
		})
	}
}

func TestZombiesCountsStateZOnly(t *testing.T) {
	is := is.New(t)
	kids := []procStat{{State: 'Z'}, {State: 'S'}, {State: 'Z'}, {State: 'R'}}
	is.Equal(zombies(kids), 2) // only state Z counts
	is.Equal(zombies(nil), 0)  // no children, no zombies
}

func TestOpenFDsCountsThisProcess(t *testing.T) {
	is := is.New(t)
	before := openFDs()
	if before < 0 {
		t.Skip("no /proc here")
	}
	f, err := os.Open(os.DevNull)
	is.NoErr(err)                 // /dev/null opens
	is.Equal(openFDs(), before+1) // one more descriptor while it is open
	is.NoErr(f.Close())           // it closes
	is.Equal(openFDs(), before)   // and the count is back
}

func TestParseWorkloads(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
		bad      bool
	}{
		{"one", "w9", []string{"w9"}, false},
		{"several, any case and spacing", " W1, state50 ,w11", []string{"state50", "w1", "w11"}, false},
		{"repeat is harmless", "w2,w2", []string{"w2"}, false},
		{"unknown", "w8", nil, true},
		{"live ones", "w12,W3", []string{"w12", "w3"}, false},
		{"empty", "", nil, true},
		{"empty item", "w1,,w2", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := parseWorkloads(tc.in)
			if tc.bad {
				is.True(err != nil) // the list is refused
				return
			}
			is.NoErr(err) // the list is accepted
			var names []string
			for name := range got {
				names = append(names, name)
			}
			slices.Sort(names)
			is.Equal(names, tc.want) // exactly the named workloads are selected
		})
	}
}

func TestParseFlagsWorkloadsAndCycles(t *testing.T) {
	is := is.New(t)
	c, err := parseFlags(nil, discard{})
	is.NoErr(err) // the defaults parse
	for _, name := range allWorkloads {
		is.True(c.has(name)) // every workload runs by default
	}
	is.Equal(c.w11Cycles, 50) // the 50 cycles by default
	c, err = parseFlags([]string{"-workloads", "w9,w11"}, discard{})
	is.NoErr(err)                           // a subset parses
	is.True(c.hasAny("w9") && !c.has("w1")) // only the named ones run
	is.True(c.budget() < defaultBudget(t))  // a subset gets a smaller deadline
	for _, args := range [][]string{{"-workloads", "w8"}, {"-w11-cycles", "0"}, {"-live-window", "0s"}, {"-w12-idle", "1s"}, {"-w11-cycles", "1001"}} {
		_, err := parseFlags(args, discard{})
		is.True(err != nil) // out-of-range values are refused
	}
}

func defaultBudget(t *testing.T) time.Duration {
	c, err := parseFlags(nil, discard{})
	if err != nil {
		t.Fatal(err)
	}
	return c.budget()
}

func TestW9NamesAlternateAndDifferPerClient(t *testing.T) {
	is := is.New(t)
	for w := range w9Clients {
		for n := range 4 {
			is.True(w9Names(w, n) != w9Names(w, n+1)) // consecutive requests always change the name
			is.Equal(w9Names(w, n), w9Names(w, n+2))  // two names in turn
		}
		is.True(w9Names(w, 0) != w9Names((w+1)%w9Clients, 0)) // clients never share a name
	}
}

// TestPacedCallLoop checks the open-loop schedule with an in-process call:
// each worker makes exactly the calls scheduled inside the window, in
// order, whatever the timing.
func TestPacedCallLoop(t *testing.T) {
	is := is.New(t)
	var mu sync.Mutex
	seen := map[int][]int{}
	tgt := target{
		pace: 10 * time.Millisecond,
		call: func(_ context.Context, w, n int) (int, error) {
			mu.Lock()
			seen[w] = append(seen[w], n)
			mu.Unlock()
			return http.StatusOK, nil
		},
	}
	res := closedLoop(context.Background(), tgt, 2, 0, 100*time.Millisecond, 1000, nil, nil)
	is.Equal(res.OK, 20)    // 10 scheduled slots per worker in 100 ms
	is.Equal(res.Errors, 0) // no call failed
	for w := range 2 {
		is.Equal(seen[w], []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) // each worker's calls in order, none skipped
	}
}
