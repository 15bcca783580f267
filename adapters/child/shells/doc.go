// Package shells is the workspace child's terminals: the shells people
// open in a workspace session and the terminals its agents open, each
// with a scrollback, served to the Hub over one attach WebSocket per
// client (github.com/coder/websocket).
//
// A Registry lives as long as the session. A PTY shell is the user's
// login shell ($SHELL of the session's environment, else the passwd
// entry's, else /bin/sh; argv[0] "-name") in the workspace folder, with
// the session's environment plus TERM=xterm-256color and
// COLORTERM=truecolor, leading its own session and process group on a
// new PTY (github.com/creack/pty). Closing it sends SIGHUP to the group
// and SIGKILL 1 s later; Registry.Close does that to every shell and
// waits a bounded time. An agent's terminal (kind agent) is a read-only
// view the agent runtime feeds through chat.TerminalWatcher.
//
// # Scrollback and flow control
//
// Each shell keeps its last RingBytes (256 KiB) of output in a ring
// addressed by absolute offsets, in memory only. A client attaches with
// the offset it has seen; it resumes there when the ring still holds it,
// else it is sent the ring from its start and told so by the hello's
// offset (the client then resets its screen). Output goes out in binary
// messages of at most 32 KiB while the bytes sent and not acknowledged
// stay under Window (256 KiB). The one PTY reader writes the ring; it
// waits rather than overwrite a byte an attached client was not sent, so
// a flood stops the program writing, as a terminal nobody reads does.
// With nobody attached the ring simply overwrites. A client that leaves
// output waiting without acknowledging any for NoAck (30 s) is closed
// (1008 "not reading"), so a stuck tab cannot stall its shell forever.
// An agent's terminal never waits: a viewer that fell behind the ring is
// sent {"type":"skip"} and continues at the ring's start.
//
// Memory per shell is therefore the ring, one chunk per client and a
// small queue of keys (4 messages of at most 64 KiB), whatever a program
// or a client does. The protocol (messages, close codes, the HTTP API
// the child serves under /s/{ID}/api/shells) is written in
// api/openapi.yaml (tag shells).
package shells
