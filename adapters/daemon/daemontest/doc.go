// Package daemontest runs the real `wharf serve` binary for tests and load
// runs, the way net/http/httptest runs a handler: it builds the binary
// (Build, BuildBinary), starts, stops, kills and restarts daemon processes
// over a private state directory (Start, Daemon), logs in (Login, Client),
// and holds the two security harnesses every family extends:
//
//   - CrashLoad: writers of several families mutate the Hub through its
//     HTTP API while the daemon is killed with SIGKILL at random points;
//     after each restart every acknowledged (2xx) write must still be
//     there, and no recovery journal may be left pending. It returns its
//     Figures, so a test asserts them and bench/ reports them.
//   - Secrets: every answer (headers, bodies, live-stream frames), every
//     log line and every file of the state directory is recorded, and
//     Check fails naming the secret (by name, never by value) and the
//     place it leaked to. CheckModes checks the state directory's modes.
//
// Nothing here imports the Hub's core: the daemon is a black box reached
// over loopback HTTP, its stderr and its state directory. The push family
// runs the fake push service (fakes/pushservice) beside it: the world
// outside the Hub it pushes to.
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
// # A family's secrets
//
// Every secret a scenario learns is registered in one line where it is
// learned, with the places it belongs, if any; anywhere else is a leak:
//
//	sec.Register("token credential", token)
//	sec.Register("session id", c.Token, daemontest.InResponse(resp)) // the answer that issued it
//	sec.Register("first-user password", pw, daemontest.InFile(daemontest.FirstPasswordFile))
//
// Send every request through sec.Client (or sec.Transport), pass
// sec.Log(name) as the daemon's Options.Log and as the output of any other
// command the scenario runs, call sec.ScanStateDir at the moments worth a
// look (while a workspace runs, after a shutdown), and end with
// sec.Check(t).
//
// # A family's crash writes
//
// A Family is a value with three functions: Setup (what its writers need
// before the kills begin), Next (the next mutation, as an Op that says how
// an acknowledged answer, and a request cut by a kill, change the model)
// and Observe (what the daemon holds of the writer's resources, as a Model
// of facts). Add it to CrashConfig.Families; DefaultFamilies lists the
// built-in ones (folders, workspaces, display names, personal state,
// credentials, clone jobs, worktrees, push deliveries), whose files are
// the templates:
//
//	cfg.Families = append(daemontest.DefaultFamilies(), myFamily)
//
// After every restart the driver compares each writer's model with the
// observation: a fact acknowledged and missing is lost, a fact nothing
// explains is unexpected, and a request cut by a kill may have landed or
// not, but nothing in between. After every kill it also reads the
// journals the daemon left in its database (crashjournals.go): one that
// outlives the restart after it was never settled. A family counts the
// outcomes its contract allows but a reader should see with Writer.Note.
//
// A family whose writes have consequences in time and outside the Hub
// (the push family: messages the Hub journals, then sends at least 30 s
// after it starts) also sets Prepare (what the daemons need beside them,
// and their flags), Stopped (reads the database each daemon left, on the
// census's copy) and Settle (waits, before the last stop, for what is
// still due): crashhooks.go.
package daemontest
