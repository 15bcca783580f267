package httpjson_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
)

// TestStatusOf copies the architecture's table of kinds and statuses row by
// row, and fails when a kind is added to the core without a status here.
func TestStatusOf(t *testing.T) {
	want := map[hub.Kind]int{
		hub.Invalid:         http.StatusBadRequest,
		hub.Unauthenticated: http.StatusUnauthorized,
		hub.Forbidden:       http.StatusForbidden,
		hub.NotFound:        http.StatusNotFound,
		hub.Conflict:        http.StatusConflict,
		hub.TooLarge:        http.StatusRequestEntityTooLarge,
		hub.RateLimited:     http.StatusTooManyRequests,
		hub.Internal:        http.StatusInternalServerError,
		hub.Unavailable:     http.StatusServiceUnavailable,
	}
	for _, k := range hub.Kinds() {
		t.Run(k.String(), func(t *testing.T) {
			is := is.New(t)
			status, ok := want[k]
			is.True(ok)                                             // every kind has a row in this table
			is.Equal(httpjson.StatusOf(hub.Errorf(k, "x")), status) // and maps to its status
		})
	}
	is := is.New(t)
	is.Equal(httpjson.StatusOf(errors.New("unexpected")), http.StatusInternalServerError) // foreign errors are 500
}
