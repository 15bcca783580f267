package service

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	apidoc "github.com/wharfhub/wharf/api"
)

// contract is api/openapi.yaml, loaded once.
var contract = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(apidoc.OpenAPI)
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background())
})

// CheckSchema validates data against the named schema of api/openapi.yaml,
// for the external tests' check of every envelope they read.
func CheckSchema(name string, data []byte) error {
	doc, err := contract()
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	return doc.Components.Schemas[name].Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
}

// AddressKey is the key of a client address in the login limits.
var AddressKey = addressKey

// SettingDeviceKey is the setting holding the device token key.
const SettingDeviceKey = settingDeviceKey

// WorktreesShown counts the linked worktrees whose state facts the Hub
// keeps in memory.
func WorktreesShown(h *Hub) int {
	h.wt.mu.Lock()
	defer h.wt.mu.Unlock()
	return len(h.wt.trees)
}
