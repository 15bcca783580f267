// Package agentaccount is the agent-accounts family: logging the Hub
// machine's coding agents in, from a phone, through each agent's own
// login interface (the hub.AgentLogins port), with no secret kept.
//
// The Manager owns what the contract times: one short-lived login
// runtime per agent, started by the first request that needs it and
// stopped after IdleStop without use — never while one of its logins is
// pending; statuses re-read once older than StatusMaxAge and shared by
// every reader in between; a listing that waits at most ListWait for
// runtimes still starting, then answers `starting`; a runtime that dies
// or stops answering reported `unavailable` and started again by the
// next request. Changes to one agent's logins run one at a time.
//
// Attempts: one pending login per (agent, target); a new start cancels
// the earlier one first. An attempt expires after AttemptTTL (or the
// agent's own later expiry) and, settled, stays visible SettledVisible.
//
// Secrets: a key, code or address passes through on its way to the agent
// and is not kept. What an agent says back may echo it, so every message
// the listing or an error carries goes through a Redactor, which holds
// digests of what was submitted, never the secrets themselves, for as
// long as an attempt can still speak.
//
// Nothing here stores anything: an attempt lives in memory, and a Hub
// restart forgets it (the agent's own listener dies with its runtime).
package agentaccount
