// Package hostop runs the core's folder and repository operations (hub.FS
// and hub.GitRunner) on another machine, over one byte stream: the stdin and stdout of `wharf hostop` started there over ssh by
// adapters/sshhost. The server side is the very osfs and gitexec code the
// Hub runs on its own machine, so no-replace renames, durability and the
// journals' recovery reasoning hold there too.
//
// Why not sftp: it has no rename that refuses to replace a directory, and
// no way to ask git anything. Why one long-lived stream rather than a
// process per call: browsing one folder is a ReadDir and a Lstat per
// entry, and a process started over an ssh master costs tens of
// milliseconds each; a stream answers in one round trip. Calls are
// multiplexed by id, answered as they finish (up to maxInFlight run at
// once on the server), so a slow git never holds a Lstat behind it.
//
// The wire: frames of a 4-byte big-endian length and a JSON body, each at
// most maxFrame bytes (a larger one ends the stream: neither end ever
// holds more). The client speaks first, naming the protocol; a server of
// another build refuses it and hangs up. A ReadDir of more than
// MaxEntries entries is refused rather than sent. Errors keep their
// meaning across the wire (fs.ErrNotExist, fs.ErrExist, fs.ErrPermission,
// hub.ErrNotEmpty, hub.ErrNotDir, hub.ErrNoRepository; a hub.Error's kind
// and public message; a *hub.WorktreeAddError or *hub.FetchError), their
// text kept for logs.
//
// The worktree family crosses too (worktree.go): its arguments and
// results as JSON, run there by the same gitexec code. A clone runs
// there on a stream of its own (clone.go, `wharf hostclone`), lent
// credentials that stay on the Hub (Options.Lend). What does not cross:
// a Fetch that would be lent credentials, refused by the client.
package hostop
