// Package opencode drives OpenCode's logins through its own HTTP server,
// `opencode serve` (opencode-ai 1.x; learned on 1.18.33).
//
// One server runs per runtime: started by Start on 127.0.0.1 with port 0
// (OpenCode tries 4096, else takes a free port) and the address read from
// the line it prints once it listens, so no port is guessed; it requires
// the runtime's random password (OPENCODE_SERVER_PASSWORD, basic
// authentication), so other local users cannot drive it; it runs in "/"
// with project configuration off, so no repository's configuration or
// plugin is loaded. Close stops its whole process group (SIGTERM, then
// SIGKILL: OpenCode sometimes ignores SIGTERM for seconds).
//
// The routes used, with their shapes as the server's OpenAPI document
// (GET /doc) and its source state them:
//
//	GET    /global/health                  {healthy, version}
//	GET    /provider                       {all: Provider[], default, connected: id[]}   (the catalog, ~6 MB)
//	GET    /config/providers               {providers: Provider[], default}              (the connected ones)
//	GET    /provider/auth                  {id: [{type: oauth|api, label, prompts?}]}
//	PUT    /auth/{id}                      {type: "api", key, metadata?} → true
//	DELETE /auth/{id}                      → true
//	POST   /provider/{id}/oauth/authorize  {method, inputs?} → {url, method: auto|code, instructions}
//	POST   /provider/{id}/oauth/callback   {method, code?} → true (an "auto" login: waits for the plugin)
//	POST   /instance/dispose               → true (the server re-reads its state on the next request)
//
// The saved logins come from OpenCode's store, auth.json, read directly
// (no route lists them): see store.go. The server caches its providers
// from its first request on, so after a change the driver disposes of
// that state, as OpenCode's own clients do, but only while no login is
// pending: disposing drops the pending ones.
//
// Status mapping: a target per provider with methods of its own, a login
// of any kind, or among the few OpenCode lists first; its methods are
// the provider's own (id = index; api → key, oauth → oauth, prompts →
// fields with their conditions), else an API key, plus "set VAR where the
// Hub runs" when the provider reads a key from the environment. Its
// credentials: the saved login (id = the provider's id: what logout
// names; key, oauth or saved), a key from the environment (env), the
// configuration's (config) and a connection OpenCode makes itself
// (other); only the saved one is removable. Capabilities: login and
// logout, never activate (one login per provider).
//
// Bounds: every call within callTimeout (15 s) but the reads of the
// providers and methods (readTimeout, 60 s: the first one waits while
// OpenCode loads them) and the callback a browser login waits on
// (flowTimeout, 30 min); every answer read whole is at most 1 MiB;
// the catalogs are streamed, at most 64 MiB, holding a token at a time;
// the store at most 1 MiB; the start's output at most 64 KiB.
package opencode
