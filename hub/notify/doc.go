// Package notify holds the rules of Web Push notifications, pure and
// without goroutines: what an enrollment may say (enroll.go), which
// workspaces and categories a device covers and since when (device.go),
// what becomes of one occurrence on its way to one device (delivery.go),
// who counts as present (presence.go), what a push message says
// (payload.go) and how the journal stays bounded (journal.go).
//
// The service (hub/service, notify*.go) runs them: it observes the
// notification feed of every running workspace a device covers, journals
// a delivery per (workspace, device, occurrence) through the commit path
// before anything is sent, and sends through the Pusher port at most
// eight at a time.
//
// Three decisions shape the rules:
//   - An occurrence has one identity for good (the session builds it from
//     the agent, the conversation, the kind and the request's or turn's
//     id), and a delivery is keyed by it: a snapshot that lists it again,
//     a reconnect that replays it, a restart that finds it journaled never
//     make a second delivery. Settled deliveries are kept (24 h, 10,000 at
//     most) for exactly that.
//   - Presence is the Hub's to decide, never the browser's: a user who has
//     the workspace open on the live stream is present, for 30 s after
//     leaving recent, away otherwise. A finished turn is dropped while its
//     user looks at it; a question is held until the user walks away (60
//     min at most), and a permission waits a short grace first, so one
//     answered at once sends nothing.
//   - Cutoffs make history unsendable: a device receives an occurrence of
//     a category in a workspace only if it happened after the device
//     started covering that workspace for that category under its current
//     login.
package notify
