package service_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// shellsOf returns the shells the state shows for ws.
func shellsOf(s *hub.HubState, ws string) []hub.Shell {
	for _, w := range s.Workspaces {
		if w.ID == ws {
			return w.Shells
		}
	}
	return nil
}

// When a session's activity frames say its shells moved, the Hub reads
// that workspace's facts again at once: the state shows the shells long
// before FactsTTL (which the fake clock never reaches) would have.
func TestMovedShellsReachTheStateWithoutWaitingForTheFactsToGoStale(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t)
	e.start(e.app)
	s, err := e.State(e.ctx, e.sess)
	is.NoErr(err)
	is.Equal(len(shellsOf(s, e.app)), 0) // none yet
	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
	defer cancel()
	for _, want := range [][]hub.Shell{
		{{Attached: false, Label: "shell 1"}},
		{{Attached: true, Label: "shell 1"}, {Attached: false, Label: "build"}},
		{{Attached: false, Label: "build"}},
	} {
		e.backend.SetShells(e.app, want)
		_, err := service.WaitState(ctx, e.Hub, func(s *hub.HubState) bool { return slices.Equal(shellsOf(s, e.app), want) })
		is.NoErr(err) // the state shows the shells as they are now
	}
}
