// Package hub is the vocabulary of Wharf, a self-hosted Hub daemon that
// implements the Hub Service Interface (Hub revision 11, workspace
// revision 24): what every other package of Wharf shares, and nothing
// that runs.
//
//   - The records the Hub keeps (Workspace, User, DeviceSession, Journal,
//     PersonalState) and the requests and answers of its operations
//     (HubState, RegisterRequest, LoginResult, …), with the contract's
//     rules on names and values (names.go, user.go, personal.go).
//   - One error type, Error, whose Kind says what went wrong; adapters map
//     kinds onto their transport (HTTP statuses in one table).
//   - The live stream's words: topics, subscriptions, the document key.
//   - The ports, one file per family (ports_store.go, ports_backend.go,
//     ports_git.go, ports_fs.go, ports_clock.go): the interfaces through
//     which the core reaches persistence, workspace sessions, Git, folders
//     and time, each method's contract in its comment. Adapters implement
//     them, fakes implement them deterministically, and fakes/porttest
//     holds one conformance suite per port that both pass.
//
// The service itself is package hub/service; the conversation core, with
// the coding-agent ports only it uses, is hub/chat. Like them, hub is
// pure: it never imports net/http, os/exec, database/sql or a driver (a
// test enforces it), so the same core runs in the wharf daemon, inside
// another Go program (examples/embed) and in deterministic tests.
package hub
