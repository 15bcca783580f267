package hub

import (
	"testing"

	"github.com/matryer/is"
)

var (
	stoppedObs  = Observation{}
	quietObs    = Observation{Running: true}
	workingObs  = Observation{Running: true, Working: true}
	awaitingObs = Observation{Running: true, Awaiting: true}
	bothObs     = Observation{Running: true, Working: true, Awaiting: true}
)

// The `finished` rules, one row per transition of the contract's "Activity
// finished flag" and the earlier system's pinned cases.
func TestFinishedFlag(t *testing.T) {
	tests := []struct {
		name string
		seq  []Observation
		want bool
	}{
		{"first seen quiet is not finished", []Observation{quietObs}, false},
		{"working then quiet is finished", []Observation{workingObs, quietObs}, true},
		{"working is not finished", []Observation{workingObs}, false},
		{"working then awaiting is not finished", []Observation{workingObs, awaitingObs}, false},
		{"awaiting then quiet is not finished", []Observation{awaitingObs, quietObs}, false},
		{"working and awaiting then quiet is not finished", []Observation{bothObs, quietObs}, false},
		{"work starting again clears it", []Observation{workingObs, quietObs, workingObs}, false},
		{"a question after the finish clears it", []Observation{workingObs, quietObs, awaitingObs}, false},
		{"quiet again keeps it", []Observation{workingObs, quietObs, quietObs}, true},
		{"unreachable hides it", []Observation{workingObs, quietObs, stoppedObs}, false},
		{"unreachable keeps the mark for the recovery", []Observation{workingObs, quietObs, stoppedObs, quietObs}, true},
		{"unreachable then quiet is not a new finish", []Observation{workingObs, stoppedObs, quietObs}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			m := newActivityMarks()
			for _, o := range tt.seq {
				m.observe("app", o)
			}
			is.Equal(m.of("ann", "app").Finished, tt.want) // finished after the sequence
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
	is.Equal(m.of("ann", "app"), WorkspaceActivity{}) // never observed
	m.observe("app", bothObs)
	is.Equal(m.of("ann", "app"), WorkspaceActivity{Running: true, Working: true, Awaiting: true}) // running
	m.observe("app", stoppedObs)
	is.Equal(m.of("ann", "app"), WorkspaceActivity{}) // a child that does not answer reports not running
}
