// Package clone is the rules of the clone-jobs family: a job that clones
// a repository into a new folder, registers it as a workspace and, when
// asked, starts it, while its owner follows Git's output and answers its
// prompts from any of their devices. It decides; it does nothing. Its
// functions and types read the records of package hub (clone.go) and
// answer a value — a checked request, a next state, the text of an event
// — or a hub.Error with the contract's (or the earlier system's) message.
// It is pure: no I/O, no clock (callers pass now), no goroutines, and it
// imports hub and hub/credential's rules, never hub/service. The service
// holds a Job, a Log, a Normalizer and a Scrubber per job under its lock;
// the GitRunner runs Git in a PTY.
//
// # What is where
//
//	url.go      CheckURL: the accepted remotes, the transport and the host
//	name.go     DeriveFolderName, CheckFolderName: the checkout folder
//	request.go  CheckRequest: every field, in the earlier system's order
//	fit.go      CredentialFits: a credential for the URL's transport
//	job.go      Job: phases, results, cancel, time-outs, retention; limits
//	events.go   Log: numbered events, Last-Event-ID replay, the bound
//	output.go   Normalizer: a PTY's bytes to clean text, chunk by chunk
//	scrub.go    Scrubber: inputs removed from later output
//
// # Before any process starts
//
// CheckRequest checks the URL (no remote helper such as ext::, no
// leading '-', no embedded credentials, a scheme Git will not hand to a
// helper), dest, the folder name (typed or derived: the FolderName bar,
// so a URL ending in ".github" or a zero-width space cannot name a
// hidden or disguised folder), the display name, the credential id's
// shape and the legacy retainAssignment. The service then checks the
// credential (CredentialFits; UnknownCredential), the retained
// selections and signing (credential.Catalog.Onboard), that dest is an
// existing directory, and reserves the target. The earlier system
// checked embedded credentials only when it resolved a credential (its
// step 6); here the URL is checked whole first, which only changes which
// of two faults is named.
//
// # The job
//
//	from          event                       to / result
//	cloning       git exits 0                 registering (Advance)
//	cloning       git fails, cannot start     clone-failed
//	registering   registered, no start        succeeded (running false)
//	registering   registration fails          register-failed
//	registering   registered, start asked     starting (Advance)
//	starting      started                     succeeded (running true)
//	starting      start fails                 start-failed (the stopped
//	                                          workspace kept: workspaceId)
//	any           Cancel, shutdown            cancelled, once stopped and
//	                                          rolled back
//	any           Expire: lifetime (60 min),  timed-out with its reason
//	              inactivity (10 min of no
//	              output or input, cloning)
//	any           rollback or cleanup fails   cleanup-failed (500 to the
//	                                          cancel that asked)
//
// A stop wins over what the stopped work then reports, a failed rollback
// excepted. A result is final; a cancel then answers "terminal". The
// events of a finished job are retained 5 minutes (Retained), then every
// operation answers 404.
//
// # Output
//
// Git's terminal output goes Normalizer → Scrubber → Log. The normalizer
// drops escape sequences and control characters, decodes UTF-8 as a
// stream and keeps "\r" only where it means "what follows replaces this
// line", so a page draws Git's progress in place, as a terminal does
// (the earlier system turned each "\r" into a line end, which scrolled
// hundreds of progress lines). The scrubber removes every input of 4
// bytes or more (the earlier system scrubbed every non-empty input, so
// "yes" vanished from later words); it holds back only a tail that may
// begin a secret. The log retains 64 KiB of output and drops superseded
// progress from what it retains, so a long clone's replay still shows
// its first lines and prompts.
package clone
