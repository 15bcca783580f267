package childrun_test

import (
	"context"
	"testing"
	"time"
)

// testTimeout bounds every wait of a test.
const testTimeout = 30 * time.Second

// testContext is the test's context, bounded by testTimeout.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}
