// Package daemontest runs the real `wharf serve` binary for tests and load
// runs, the way net/http/httptest runs a handler: it builds the binary
// (Build, BuildBinary), starts, stops, kills and restarts daemon processes
// over a private state directory (Start, Daemon), logs in (Login, Client),
// and holds the security harnesses every family extends:
//
//   - CrashLoad: writers of several families mutate the Hub through its
//     HTTP API while the daemon is killed with SIGKILL at random points;
//     after each restart every acknowledged (2xx) write must still be
//     there, and no recovery journal may be left pending. It returns its
//     Figures, so a test asserts them and bench/ reports them.
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
//
// # A family's crash writes
//
// A Family is a value with three functions: Setup (what its writers need
// before the kills begin), Next (the next mutation, as an Op that says how
// an acknowledged answer, and a request cut by a kill, change the model)
// and Observe (what the daemon holds of the writer's resources, as a Model
// of facts). Add it to CrashConfig.Families; DefaultFamilies lists the
// built-in ones (folders, workspaces, display names, personal state), whose
// files are the templates:
//
//	cfg.Families = append(daemontest.DefaultFamilies(), myFamily)
//
// After every restart the driver compares each writer's model with the
// observation: a fact acknowledged and missing is lost, a fact nothing
// explains is unexpected, and a request cut by a kill may have landed or
// not, but nothing in between.
package daemontest
