// Package credential is the rules of the credentials family: SSH keys,
// OpenPGP keys and tokens the Hub holds and lends to the workspaces they
// are assigned to. It decides; it does nothing. Its functions read the
// records of package hub (credentials.go) and answer a value — a
// normalized input, a next state, a Change of assignments, readiness
// results, a revision — or a hub.Error with the contract's (or the
// earlier system's) message, for the service to commit through its one
// commit path. It is pure: no clock (callers pass now), no store, no
// vault, no I/O, and it imports hub, never hub/service.
//
// # What is where
//
//	host.go        NormalizeHost: the one form of a Git host, on every path
//	input.go       ids, names, passphrases, user ids, token values, user names
//	capability.go  the capabilities of each type; which role each can take
//	assign.go      Catalog: assign, the workspace pair, the workspace's names
//	unassign.go    unassign and its stop guard, delete, onboarding selections
//	state.go       the states and the operations that move between them
//	readiness.go   readiness of a record, and the test operation's results
//	revision.go    what a session was given, and credentialRestartRequired
//	ratelimit.go   the generate/import and unlock/test budgets
//
// The secrets are the KeyVault's (hub.KeyVault: sealed at rest, unlocked
// into Hub memory only, lent through one agent per session); the records
// and assignments are the CredentialStore's. Nothing here ever sees a
// private key or a token value; a passphrase or token is only checked for
// its shape, and no refusal quotes one.
//
// # States
//
// A credential is enabled or disabled and, when it is a key, locked or
// unlocked: its secret held in the Hub's memory, where every agent of a
// session it is assigned to can use it. A token has no lock (its value is
// sealed with the Hub's key and checked at each use). Assignments do not
// change the state; delete ends it.
//
//	from              operation        guard (refusal)                              to
//	(new) generate    generate         —                                            enabled, locked
//	(new) import      import           —                                            enabled; SSH unlocked; OpenPGP
//	                                                                                unlocked unless protected
//	(new) token       create token     —                                            enabled
//	(Hub start)       —                —                                            locked; an enabled unprotected
//	                                                                                key unlocked
//	any               enable           —                                            enabled; an unprotected key
//	                                                                                unlocked, a protected one as it was
//	any               disable          CLI-token sessions stopped first (500 if     disabled, locked
//	                                   a stop fails: RevokeStopsSessions)
//	key               lock             a token: 400 "token credentials cannot be    locked (enabled as it was)
//	                                   locked or unlocked"
//	enabled key       unlock           a token: 400 (as lock); a bad passphrase:    unlocked (a wrong passphrase: the
//	                                   400; a protected SSH key without one: 400    vault's 400, nothing moves)
//	                                   "SSH private key passphrase is required";
//	                                   disabled: 409 "SSH credential is disabled",
//	                                   "OpenPGP credential is disabled"
//	enabled           assign, pair     capability or host: 400; disabled: 409       unchanged
//	                                   "credential is disabled: <id>"; a default
//	                                   held: 409 "credential assignment conflicts
//	                                   with existing default: <id>" (assign without
//	                                   replace); a second token for one CLI: 409
//	any               unassign         running without stop: 409 "credential       unchanged (with stop the session
//	                                   assignment removal conflicts with the        stops in the same operation)
//	                                   running workspace session; stop it first
//	                                   or pass stop: true"
//	any               delete           no confirm: 400 "credential deletion         gone (locked first; CLI-token
//	                                   requires confirmation"; assigned without     sessions stopped first)
//	                                   unassign: 409 "credential is assigned to
//	                                   N workspace default(s)"
//	any               test             a disabled OpenPGP key: 409 "OpenPGP         unchanged
//	                                   credential is disabled"
//
// The 409s of a pending recovery journal and of a linked worktree are the
// service's, which knows the journals and the workspaces.
//
// # Reading changes nothing
//
// Readiness is a function of the record and of whether the vault holds
// the key: listing credentials never loads a key (the earlier system
// auto-loaded unencrypted keys on a GET, undoing an explicit lock). The
// Hub unlocks unprotected keys once, at start (AtStart), and on enable.
//
// # What a session was given
//
// A session's Projection is its assignments, their records, a digest of
// each assigned token's sealed value and the paths of only the tools its
// configuration names (ToolsUsed). credentialRestartRequired compares the
// Revision taken at start with the one now: enable, disable, assign,
// unassign, a token stored anew and a used tool's new path flip it; a
// lock (live on the agent) and another workspace's change do not.
package credential
