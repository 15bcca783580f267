package httpapi_test

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/httpapi"
)

// pending lists the contract's operations that are not built yet. They are
// not routed (no stub handlers): a request to one answers 404 or 405. Each
// later issue removes the operations it builds; the list ends empty.
var pending = []string{}

// internal lists the routes served outside the contract (spec, "What the
// service does" 5 and Errors 7).
var internal = []string{
	"GET /api/openapi.yaml",
	"GET /s/{workspaceId}/api/events",
	"GET /s/{workspaceId}/api/chat/conversations/events",
	"GET /s/{workspaceId}/api/chat/conversations/{conversationId}/events",
	"GET /s/{workspaceId}/api/activity",
	"* /s/{workspaceId}/", // everything else under /s/: forwarded to the running child
}

func TestMain(m *testing.M) {
	code := m.Run()
	// Only a full run can tell whether every routed operation was exercised
	// (not one filtered by -run, nor a listing by -list).
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.list").Value.String() == "" {
		if err := checkExercised(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func TestRouteCoverage(t *testing.T) {
	is := is.New(t)
	ops := contractOperations(t)
	byID := map[string]string{}
	for key, id := range ops {
		is.True(id != "") // every operation has an operationId
		_, dup := byID[id]
		is.True(!dup) // operationIds are unique
		byID[id] = key
	}
	isPending := map[string]bool{}
	for _, id := range pending {
		_, known := byID[id]
		if !known {
			t.Errorf("pending lists %s, which the contract does not have", id)
		}
		is.True(!isPending[id]) // pending names an operation once
		isPending[id] = true
	}
	marked := contractPending(t)
	for id := range marked {
		if !isPending[id] {
			t.Errorf("the contract marks %s x-wharf-pending, but it is not on the pending list", id)
		}
	}
	for id := range isPending {
		if !marked[id] {
			t.Errorf("%s is pending, but the contract does not mark it x-wharf-pending: clients would call it", id)
		}
	}
	isInternal := map[string]bool{}
	for _, r := range internal {
		isInternal[r] = true
	}

	routed := map[string]bool{}
	for _, r := range httpapi.Routes() {
		key := r.Method + " " + r.Pattern
		is.True(!routed[key]) // each method and pattern is routed once
		routed[key] = true
		if r.OperationID == "" {
			if !isInternal[key] {
				t.Errorf("%s is routed but is neither an operation of the contract nor on the internal list", key)
			}
			continue
		}
		want, ok := byID[r.OperationID]
		switch {
		case !ok:
			t.Errorf("%s is routed as %s, which the contract does not have", key, r.OperationID)
		case want != key:
			t.Errorf("%s is routed at %s, but the contract has it at %s", r.OperationID, key, want)
		case isPending[r.OperationID]:
			t.Errorf("%s is routed: remove it from the pending list", r.OperationID)
		}
	}
	var unrouted []string
	for key, id := range ops {
		if !routed[key] && !isPending[id] {
			unrouted = append(unrouted, id+" ("+key+")")
		}
	}
	sort.Strings(unrouted)
	for _, u := range unrouted {
		t.Errorf("%s is neither routed nor pending", u)
	}
	for r := range isInternal {
		if !routed[r] {
			t.Errorf("internal route %s is not routed", r)
		}
	}
}
