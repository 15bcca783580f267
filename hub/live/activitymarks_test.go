package live

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

var (
	stoppedObs  = hub.Observation{}
	quietObs    = hub.Observation{Running: true}
	workingObs  = hub.Observation{Running: true, Working: true}
	awaitingObs = hub.Observation{Running: true, Awaiting: true}
	bothObs     = hub.Observation{Running: true, Working: true, Awaiting: true}
)

// The contract's "Activity `finished` flag (per caller)", row by row: each
// row is one clause of the rule, and the steps what the Hub observes of
// the workspace "app" (quiet, working, awaiting, both, unreachable), its
// session stopping (stop) and ann acknowledging it (ack).
func TestFinishedFollowsTheContractRowByRow(t *testing.T) {
	obs := map[string]hub.Observation{"quiet": quietObs, "working": workingObs, "awaiting": awaitingObs,
		"both": bothObs, "unreachable": stoppedObs}
	tests := []struct {
		rule  string // the clause of the contract
		steps string
		want  bool // finished for ann after the steps
	}{
		// "Set when the Hub observed the workspace working and it has gone
		// quiet (not working, nothing awaiting)"
		{"working then quiet is set", "working quiet", true},
		{"a turn that asked a permission then quiet is set", "working both quiet", true},
		{"working while awaiting then quiet is set", "both quiet", true},
		{"a permission answered before the turn ends is set", "working both working quiet", true},
		{"working then awaiting alone then quiet is set", "working awaiting quiet", true},
		{"still working is not set", "working", false},
		{"awaiting is not quiet", "working both", false},
		{"awaiting alone is not quiet", "working awaiting", false},
		{"quiet never observed working is not set", "awaiting quiet", false},
		{"working seen before an unreachable spell then quiet is set", "working unreachable quiet", true},
		// "and the caller has not acknowledged viewing it"
		{"acknowledged is not set", "working quiet ack", false},
		{"a later finish outranks the acknowledgement", "working quiet ack working quiet", true},
		{"an acknowledgement while working acknowledges nothing", "working ack quiet", true},
		// "Cleared by hubAcknowledgeWorkspaceActivity, by the session
		// stopping, or by work starting again"
		{"the session stopping clears it", "working quiet stop quiet", false},
		{"the session stopping forgets the work", "working stop quiet", false},
		{"work starting again clears it", "working quiet working", false},
		{"work starting again and awaiting clears it", "working quiet both", false},
		{"a question after the finish hides it while it waits", "working quiet awaiting", false},
		{"a question after the finish does not clear it", "working quiet awaiting quiet", true},
		{"quiet again keeps it", "working quiet quiet", true},
		// "A workspace first seen quiet is not finished."
		{"first seen quiet is not finished", "quiet", false},
		{"first seen quiet twice is not finished", "quiet quiet", false},
		// WorkspaceActivity: finished "always false when not running"
		{"unreachable hides it", "working quiet unreachable", false},
		{"unreachable keeps the mark for the recovery", "working quiet unreachable quiet", true},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			is := is.New(t)
			m := newActivityMarks()
			for _, step := range strings.Fields(tt.steps) {
				switch step {
				case "stop":
					m.stopped("app")
				case "ack":
					m.acknowledge("ann", "app")
				default:
					o, ok := obs[step]
					is.True(ok) // a known step
					m.observe("app", o)
				}
			}
			is.Equal(m.of("ann", "app").Finished, tt.want) // finished after the steps
		})
	}
}

func TestAcknowledgingIsPerUserAndIdempotent(t *testing.T) {
	is := is.New(t)
	m := newActivityMarks()
	m.observe("app", workingObs)
	m.observe("app", quietObs)
	is.True(m.acknowledge("ann", "app"))  // ann's first view changes what she sees
	is.True(!m.acknowledge("ann", "app")) // a second changes nothing
	is.True(!m.of("ann", "app").Finished) // ann saw it
	is.True(m.of("bob", "app").Finished)  // bob did not

	m.observe("app", workingObs)
	m.observe("app", quietObs)
	is.True(m.of("ann", "app").Finished) // a later finish outranks the earlier view

	m.stopped("app")
	m.observe("app", quietObs)
	is.True(!m.of("bob", "app").Finished) // a stop clears every mark
	is.True(!m.acknowledge("bob", "app")) // and there is nothing to acknowledge
}

func TestActivityIsAllFalseWhenNotRunning(t *testing.T) {
	is := is.New(t)
	m := newActivityMarks()
	is.Equal(m.of("ann", "app"), hub.WorkspaceActivity{}) // never observed
	m.observe("app", bothObs)
	is.Equal(m.of("ann", "app"), hub.WorkspaceActivity{Running: true, Working: true, Awaiting: true}) // running
	m.observe("app", stoppedObs)
	is.Equal(m.of("ann", "app"), hub.WorkspaceActivity{}) // a child that does not answer reports not running
}
