// Package api holds Wharf's public contract: the OpenAPI 3.1 document of the
// Hub Service Interface (Hub revision 11, workspace revision 24). The daemon
// serves it at GET /api/openapi.yaml, and the httpapi tests validate every
// response they receive against it.
package api

import _ "embed"

// OpenAPI is the contract document, api/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
