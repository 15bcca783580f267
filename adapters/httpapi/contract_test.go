package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/wharfhub/wharf/adapters/httpapi"
	apidoc "github.com/wharfhub/wharf/api"
)

// The contract document, loaded once for every test of the package.
var contract = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(apidoc.OpenAPI)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return doc, nil
})

var contractRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := contract()
	if err != nil {
		return nil, err
	}
	// Match any test host: the servers block names the production form.
	doc.Servers = nil
	return gorillamux.NewRouter(doc)
})

// validated records the operations whose responses were validated, so the
// package can check that every routed operation was exercised.
var validated = struct {
	sync.Mutex
	ops map[string]bool
}{ops: map[string]bool{}}

// contractDocPath serves the document itself (YAML), outside the contract.
const contractDocPath = "/api/openapi.yaml"

// contractTransport validates every response a test receives against
// api/openapi.yaml before the test sees it. A response to a documented
// operation must match that operation: a status it does not list (500
// excepted: see the document's conventions), a header it declares missing
// or wrong, or a body with an unknown or missing field fails the test.
// Every other response (405, unknown paths, the retired stream routes) must
// be a closed JSON error body with Cache-Control no-store, except a success
// forwarded from a workspace child under /s/, which is the child's internal
// protocol.
type contractTransport struct {
	t    testing.TB
	base http.RoundTripper
}

func (c contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if msg := checkResponse(req, resp, body); msg != "" {
		c.t.Errorf("contract violation: %s %s -> %d: %s\nbody: %s", req.Method, req.URL.Path, resp.StatusCode, msg, body)
	}
	return resp, nil
}

// checkResponse returns why resp breaks the contract, or "".
func checkResponse(req *http.Request, resp *http.Response, body []byte) string {
	doc, err := contract()
	if err != nil {
		return "contract document: " + err.Error()
	}
	router, err := contractRouter()
	if err != nil {
		return "contract router: " + err.Error()
	}
	if req.URL.Path == contractDocPath && req.Method == http.MethodGet {
		return ""
	}
	route, params, err := router.FindRoute(req)
	if err != nil || resp.StatusCode == http.StatusInternalServerError || resp.StatusCode == http.StatusMisdirectedRequest {
		return checkUndocumented(doc, req, resp, body)
	}
	if resp.StatusCode == http.StatusTooManyRequests && route.Operation.Responses.Status(http.StatusTooManyRequests) == nil {
		return checkUndocumented(doc, req, resp, body) // the per-client bound behind a proxy, a convention of the document
	}
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(req.Context(), out); err != nil {
		return err.Error()
	}
	validated.Lock()
	validated.ops[route.Operation.OperationID] = true
	validated.Unlock()
	return ""
}

// checkUndocumented checks an answer that no operation documents: a 405,
// an unknown path, a retired stream route, a 421 for a foreign Host, a
// 429 for a client behind a proxy over its requests in flight, or a 500. Each is a closed JSON
// error body with no-store.
func checkUndocumented(doc *openapi3.T, req *http.Request, resp *http.Response, body []byte) string {
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		return fmt.Sprintf("X-Content-Type-Options %q, want nosniff", got)
	}
	if got := resp.Header.Get("Cache-Control"); got != "no-store" {
		return fmt.Sprintf("Cache-Control %q, want no-store", got)
	}
	if got := resp.Header.Get("Content-Type"); got != "application/json" {
		return fmt.Sprintf("Content-Type %q, want application/json", got)
	}
	if resp.StatusCode < 400 {
		if strings.HasPrefix(req.URL.Path, "/s/") {
			return "" // the workspace child's own answer, forwarded: its internal protocol
		}
		return "a success answer to a request no operation documents"
	}
	if resp.StatusCode == http.StatusMethodNotAllowed && resp.Header.Get("Allow") == "" {
		return "405 without an Allow header"
	}
	if req.Method == http.MethodHead {
		if len(body) != 0 {
			return "HEAD answered with a body"
		}
		return ""
	}
	schema := "Error"
	if resp.StatusCode == http.StatusGone {
		schema = "RetiredStream"
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return "body is not JSON: " + err.Error()
	}
	if err := doc.Components.Schemas[schema].Value.VisitJSON(v); err != nil {
		return schema + ": " + err.Error()
	}
	return ""
}

// contractOperations lists the document's operations the Hub serves
// itself as "METHOD path" -> operationId: those marked `x-served-by:
// workspace` (the chat API) are forwarded to the workspace's child.
// contractPending returns the operationIds the contract marks
// `x-wharf-pending: true`: not built, not routed.
func contractPending(t testing.TB) map[string]bool {
	t.Helper()
	doc, err := contract()
	if err != nil {
		t.Fatalf("contract document: %v", err)
	}
	out := map[string]bool{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.Extensions["x-wharf-pending"] == true {
				out[op.OperationID] = true
			}
		}
	}
	return out
}

func contractOperations(t testing.TB) map[string]string {
	t.Helper()
	doc, err := contract()
	if err != nil {
		t.Fatalf("contract document: %v", err)
	}
	ops := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Extensions["x-served-by"] == "workspace" {
				continue // forwarded to the workspace's child, which the child's tests cover
			}
			ops[method+" "+path] = op.OperationID
		}
	}
	return ops
}

// checkExercised fails when an operation the handler routes was never
// validated by any test of the package: every implemented operation needs
// at least one test whose responses the contract checked.
func checkExercised() error {
	routed := map[string]bool{}
	for _, r := range httpapi.Routes() {
		if r.OperationID != "" {
			routed[r.OperationID] = true
		}
	}
	validated.Lock()
	defer validated.Unlock()
	var missing []string
	for op := range routed {
		if !validated.ops[op] {
			missing = append(missing, op)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return fmt.Errorf("routed operations no test exercised against the contract: %s", strings.Join(missing, ", "))
}
