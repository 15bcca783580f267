package clone_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/clone"
)

func output(s string) hub.CloneEvent        { return hub.CloneEvent{Output: s, At: t0} }
func phase(p hub.ClonePhase) hub.CloneEvent { return hub.CloneEvent{Phase: p, At: t0} }
func result(s hub.CloneStatus) hub.CloneEvent {
	return hub.CloneEvent{Result: &hub.CloneResult{Status: s, Target: target}, At: t0}
}

// appendAll appends events, failing the test on an error.
func appendAll(t *testing.T, l *clone.Log, events ...hub.CloneEvent) {
	t.Helper()
	for _, e := range events {
		if _, err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
}

// ids lists the events' ids.
func ids(events []hub.CloneEvent) []int64 {
	var out []int64
	for _, e := range events {
		out = append(out, e.ID)
	}
	return out
}

// TestEventsAreNumberedFromOneAndReplayedAfterTheLastIDInOrder copies
// research §11.9's replay rules.
func TestEventsAreNumberedFromOneAndReplayedAfterTheLastIDInOrder(t *testing.T) {
	is := is.New(t)
	var l clone.Log
	first, err := l.Append(phase(hub.PhaseCloning))
	is.NoErr(err)
	is.Equal(first.ID, int64(1)) // the first event is 1
	appendAll(t, &l, output("Cloning into 'uatu'...\n"), output("done.\n"), phase(hub.PhaseRegistering), result(hub.CloneSucceeded))
	is.Equal(ids(l.After(0)), []int64{1, 2, 3, 4, 5}) // every event, in order
	is.Equal(ids(l.After(3)), []int64{4, 5})          // those after the last id
	is.Equal(len(l.After(5)), 0)                      // none after the result
	is.Equal(len(l.After(99)), 0)                     // nor after an id from the future
	is.Equal(l.After(0)[1].Output, "Cloning into 'uatu'...\n")
	is.True(l.Ended())             // the result ends the log
	is.Equal(l.LastID(), int64(5)) // at id 5
	_, err = l.Append(output("late\n"))
	is.Equal(hub.KindOf(err), hub.Internal) // a result is the last event
	is.Equal(l.LastID(), int64(5))          // and nothing was numbered
}

func TestAnEventIsExactlyOneNonEmptyKind(t *testing.T) {
	for _, tc := range []struct {
		row string
		e   hub.CloneEvent
	}{
		{"nothing", hub.CloneEvent{}},
		{"empty output", output("")},
		{"output and phase", hub.CloneEvent{Output: "x", Phase: hub.PhaseCloning}},
		{"phase and result", hub.CloneEvent{Phase: hub.PhaseCloning, Result: &hub.CloneResult{}}},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			var l clone.Log
			_, err := l.Append(tc.e)
			is.Equal(hub.KindOf(err), hub.Internal) // the caller's bug
			is.Equal(l.LastID(), int64(0))          // nothing numbered
		})
	}
}

// TestOutputRetentionIsBoundedAndEvictsTheOldestOutputOnly copies
// §11.9: 64 KiB of UTF-8 output, oldest first, so ids have gaps; phase
// and result never evicted; a chunk over the bound kept as its tail; live
// watchers get full chunks.
func TestOutputRetentionIsBoundedAndEvictsTheOldestOutputOnly(t *testing.T) {
	is := is.New(t)
	var l clone.Log
	appendAll(t, &l, phase(hub.PhaseCloning))
	line := strings.Repeat("é", 511) + "x\n" // 1 KiB
	for range 100 {
		appendAll(t, &l, output(line))
	}
	is.Equal(l.OutputBytes(), clone.MaxOutputBytes) // 64 KiB retained
	got := l.After(0)
	is.Equal(got[0].Phase, hub.PhaseCloning) // the phase stays
	is.Equal(got[1].ID, int64(2+100-64))     // the oldest output went first: a gap
	is.Equal(len(got), 1+64)                 // 64 lines of 1 KiB

	big := strings.Repeat("é", clone.MaxOutputBytes/2) + "x" // 64 KiB + 1
	live, err := l.Append(output(big))
	is.NoErr(err)
	is.Equal(live.Output, big) // a watcher gets the full chunk
	got = l.After(0)
	is.Equal(len(got), 2)                                                      // the phase and the big chunk's tail
	is.Equal(got[1].Output, strings.Repeat("é", clone.MaxOutputBytes/2-1)+"x") // its tail, whole characters
	is.Equal(l.OutputBytes(), clone.MaxOutputBytes-1)                          // within the bound

	appendAll(t, &l, phase(hub.PhaseRegistering), result(hub.CloneSucceeded))
	for _, e := range l.After(0) {
		is.True(e.Output == "" || e.ID == got[1].ID) // phases and result kept
	}
	is.Equal(len(l.After(0)), 4) // both phases, the tail, the result
}

func TestByteAtATimeOutputIsBoundedInEvents(t *testing.T) {
	is := is.New(t)
	var l clone.Log
	for range clone.MaxOutputEvents + 10 {
		appendAll(t, &l, output("x"))
	}
	is.Equal(len(l.After(0)), clone.MaxOutputEvents) // at most 4096 output records
	is.Equal(l.After(0)[0].ID, int64(11))            // the oldest went
	is.Equal(l.OutputBytes(), clone.MaxOutputEvents) // and their bytes with them
}

// screen renders replayed output as a terminal shows it: "\r" replaces
// the line's part before it.
func screen(events []hub.CloneEvent) string {
	var lines []string
	cur := ""
	for _, e := range events {
		for _, r := range e.Output {
			switch r {
			case '\n':
				lines, cur = append(lines, cur), ""
			case '\r':
				cur = ""
			default:
				cur += string(r)
			}
		}
	}
	return strings.Join(append(lines, cur), "\n")
}

// TestReplayedProgressShowsTheLatestLine checks the issue's "\r progress
// kept as the latest line": replay after any id shows what the live
// events showed, with superseded progress gone from what is retained.
func TestReplayedProgressShowsTheLatestLine(t *testing.T) {
	is := is.New(t)
	var l clone.Log
	live := []hub.CloneEvent{phase(hub.PhaseCloning), output("Cloning into 'uatu'...\nReceiving objects:  10%"),
		output("\rReceiving objects:  50%"), output("\rReceiving objects: 100%, done.\nResolving deltas:  5%\rResolving"),
		output(" deltas: 100%\n"), output("remote: x"), output("y\rremote: z\n")}
	var sent []hub.CloneEvent
	for _, e := range live {
		got, err := l.Append(e)
		is.NoErr(err)
		sent = append(sent, got)
	}
	want := "Cloning into 'uatu'...\nReceiving objects: 100%, done.\nResolving deltas: 100%\nremote: z\n"
	is.Equal(screen(sent), want) // what the live watcher saw
	for last := int64(0); last <= l.LastID(); last++ {
		is.Equal(screen(append(sent[:last:last], l.After(last)...)), want) // what a client reconnecting after last sees
	}
	retained := ""
	for _, e := range l.After(0) {
		retained += e.Output
	}
	is.Equal(retained, "Cloning into 'uatu'...\n\rReceiving objects: 100%, done.\nResolving deltas: 100%\n\rremote: z\n") // only what a terminal shows is retained
	is.Equal(l.OutputBytes(), len(retained))                                                                              // and counted
	is.True(!strings.Contains(retained, "10%"))                                                                           // superseded progress is gone
}

func TestAReplacementDoesNotReachAcrossAPhase(t *testing.T) {
	is := is.New(t)
	var l clone.Log
	appendAll(t, &l, output("abc"), phase(hub.PhaseRegistering), output("\rxyz"))
	got := l.After(0)
	is.Equal(got[0].Output, "abc")   // the output before the phase is kept
	is.Equal(got[2].Output, "\rxyz") // and the replacement keeps its "\r"
}

// TestLastEventIDCountsAsZeroUnlessItIsADecimalNumber copies §11.9 and
// §14.11: garbage or negative is 0.
func TestLastEventIDCountsAsZeroUnlessItIsADecimalNumber(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   int64
	}{
		{"", 0}, {"0", 0}, {"7", 7}, {"0042", 42}, {"9223372036854775807", 9223372036854775807},
		{"9223372036854775808", 0}, {"99999999999999999999", 0}, {"-1", 0}, {"+3", 0}, {" 3", 0},
		{"3 ", 0}, {"3.0", 0}, {"0x10", 0}, {"abc", 0}, {"1e3", 0}, {"٣", 0},
	} {
		t.Run(tc.header, func(t *testing.T) {
			is := is.New(t)
			is.Equal(clone.ParseLastEventID(tc.header), tc.want) // the id replayed after
		})
	}
}
