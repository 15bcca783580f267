// Package docfeed is the document feed of a workspace child (`wharf
// session`): it indexes and watches one workspace folder and serves the
// live stream's document topic, the contract's DocumentUpdate frames
// (api/openapi.yaml: DocumentSnapshot and DocumentPatch).
//
// # Lifecycle
//
// New(root, opts) makes a Feed; Run(ctx) runs it until ctx ends and
// returns only once every goroutine, watch and git process it started is
// gone (with git's shadow directories, see gitcmd) and every subscription
// has ended (Next returns ErrClosed). Subscribe
// and Handler may be used before, during and after Run.
//
// # Index
//
// The root is the workspace folder: its id and path are the absolute
// folder path, its label the base name; a feed has this one root. When the
// root lies in a Git work tree, files are listed with `git ls-files`
// (tracked files, and untracked ones that .gitignore, info/exclude and the
// user's excludes file do not ignore); nested repositories and submodules
// are not entered. Otherwise the tree is walked whole, except .git: Git
// applies no ignore rules outside a repository and neither does the feed.
// Symbolic links are never followed nor listed, nor is anything but a
// regular file. A path that is not valid UTF-8 is skipped (a JSON id could
// not name it). Kinds: markdown (.md .markdown .mdown .mkd), asciidoc
// (.adoc .asciidoc .asc), text (other files whose first 8 KiB are UTF-8
// without NUL), binary (the rest, and unreadable files).
//
// Git 2.31 or later is needed (rev-parse --path-format); without it, or
// without git, the folder is indexed as a plain folder.
//
// Directories are watched with inotify (fsnotify), new ones as they
// appear. A change to a .gitignore, a .git appearing or disappearing, a
// watcher error (a lost event) or the root being replaced re-index the
// whole root: discovery reads "recovering" meanwhile, and every subscriber
// then gets a fresh snapshot. Changes to info/exclude or to a .gitignore
// above the root are not watched; they apply at the next re-index.
//
// # Revisions
//
// One sequence per feed orders everything. Each file change observed
// takes the next value as the file's revision (so two saves differ even
// within one mtime tick); each publish takes the next as the update's
// revision, and previousRevision is the revision of the publish before.
// epoch is a random UUID per Feed; generatedAt is max(now ms, previous+1);
// unscopedFingerprint is "<epoch>:<corpusRevision>", the corpus revision
// rising with every publish that upserts or removes documents.
//
// Changes are published after Options.Quiet without events, at most
// Options.MaxDelay after the first, in patches of at most
// Options.BatchLimit upserts plus removals. changedId is set only for a
// live edit (after the initial inventory) of a non-binary file; the
// snapshot's latestChange remembers the last one. discovery is "indexing"
// (discovered counting the documents published so far) until the initial
// inventory is published, then "ready" ("error" with a message when the
// folder cannot be listed or not every directory can be watched);
// defaultDocumentId is null while indexing, then the newest non-binary
// document by mtimeMs, ties to the first by relativePath.
//
// # Repository freshness
//
// repositoryState and repositories update independently of file patches;
// see refresher. A repository patch always carries repositoryState and
// carries repositories only when they changed for the subscriber's compare
// target. Both targets are computed on every refresh.
//
// # Subscribers
//
// Each subscription has a context, a Key: compare target plus scope. It
// receives a snapshot of its context first, then one patch per publish.
// Folder scope receives every change. File scope receives only its pinned
// document's upserts and removals, changedId only for that document and
// defaultDocumentId as the pinned document (null when missing or binary),
// yet every revision advance and fingerprint change. Once discovery is
// ready, a pin to a missing or binary document falls back to folder scope,
// delivered as a snapshot. A subscriber that falls behind gets a snapshot
// in place of the patches it missed, never a gap.
package docfeed
