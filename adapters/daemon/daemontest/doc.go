// Package daemontest runs the real `wharf serve` binary for tests and load
// runs, the way net/http/httptest runs a handler: it builds the binary
// (Build, BuildBinary), starts, stops, kills and restarts daemon processes
// over a private state directory (Start, Daemon) and logs in (Login,
// Client), for the security harnesses every family extends.
//
// Nothing here imports the Hub's packages: the daemon is a black box
// reached over loopback HTTP, its stderr and its state directory.
//
// # Running a daemon
//
//	d, err := daemontest.Start(ctx, daemontest.Options{Binary: daemontest.Build(t),
//		StateDir: filepath.Join(t.TempDir(), "state")})
//	t.Cleanup(func() { d.Kill() })
//	pw, err := d.FirstUserPassword()
//	c, _, err := daemontest.Login(ctx, daemontest.NewHTTPClient(nil), d.URL(), daemontest.FirstUser, pw)
//	st, err := c.State(ctx)
//
// d.Kill sends SIGKILL, d.Stop SIGTERM; d.Restart starts a new process on
// the same state directory, and c.At(d2.URL()) keeps the device session.
package daemontest
