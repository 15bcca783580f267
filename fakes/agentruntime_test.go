package fakes_test

import (
	"testing"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub/chat"
)

func TestAgentRuntimeConformance(t *testing.T) {
	porttest.AgentRuntime(t, func(t *testing.T) porttest.AgentHarness {
		rt := fakes.NewAgentRuntime(chat.AgentDescriptor{ID: "scripted", Name: "Scripted", Availability: chat.AgentAvailable})
		rt.SetAutoplay(true)
		return porttest.AgentHarness{Runtime: rt, AgentID: "scripted", Dir: t.TempDir()}
	})
}
