package daemon_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// BenchmarkStateGET answers bearer GET /api/hub/state through the whole
// handler in-process, with the metrics off and on: what counting and
// timing a request costs, without the network's noise (bench/load's M1
// measures the same over TCP).
func BenchmarkStateGET(b *testing.B) {
	for _, tc := range []struct {
		name    string
		metrics bool
	}{{"metrics off", false}, {"metrics on", true}} {
		b.Run(tc.name, func(b *testing.B) {
			d, err := daemon.Open(b.Context(), daemon.Config{StateDir: privateDirB(b), Metrics: tc.metrics,
				Hub: service.Config{Password: service.PasswordParams{Memory: 64, Time: 1, Threads: 1}}})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			if err := d.Hub().AddUser(b.Context(), "ann", metricsUserPassword); err != nil {
				b.Fatal(err)
			}
			res, err := d.Hub().Login(context.Background(), hub.LoginRequest{Name: "ann", Password: metricsUserPassword, ClientAddr: "127.0.0.1"})
			if err != nil {
				b.Fatal(err)
			}
			h := d.Handler()
			req := httptest.NewRequest("GET", "http://127.0.0.1/api/hub/state", nil)
			req.Header.Set("Authorization", "Bearer "+res.SessionID)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code != http.StatusOK {
						b.Fatalf("state: %d", w.Code)
					}
				}
			})
		})
	}
}

func privateDirB(b *testing.B) string {
	dir := b.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	return dir
}
