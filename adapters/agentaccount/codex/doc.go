// Package codex drives Codex's own login interface: `codex app-server`,
// the JSON-RPC server Codex's editor integrations use, over its stdio.
//
// One app-server process is one runtime: Start runs it (in its own
// process group, in the root directory, with the runtime's environment),
// and answers once its initialize handshake is done; Close ends it and
// its group; a crash closes Done. The wire is JSON-RPC 2.0 without the
// "jsonrpc" member, one object a line. The calls:
//
//   - account/read {} → {account: null | {type: apiKey} | {type: chatgpt,
//     email, planType, workspaceName?} | …, requiresOpenaiAuth}: Status.
//     For a ChatGPT login codex first asks OpenAI where its workspace
//     lives; when it cannot (offline, an expired token) it answers an
//     internal error, which is shown as a ChatGPT login it could not
//     confirm (still removable), not as Codex being down.
//   - account/login/start {type: apiKey, apiKey} → {type: apiKey}: the
//     key is in auth.json when the answer comes. Codex accepts any string,
//     an empty one included; the driver refuses a blank one.
//   - account/login/start {type: chatgpt} → {loginId, authUrl}: codex
//     starts its loopback listener (127.0.0.1:1455/auth/callback, or the
//     next free port; the authorize URL's redirect_uri), so the login
//     completes by redirect:
//     the address the browser landed on is requested once on the Hub
//     machine (driver.Deliver).
//   - account/login/start {type: chatgptDeviceCode} → {loginId,
//     verificationUrl, userCode}: completed on OpenAI's page.
//   - account/login/completed {loginId, success, error} (notification)
//     settles a login; account/login/cancel {loginId} abandons one;
//     account/logout {} removes auth.json.
//
// Bounds: every call (initialize included) within CallTimeout, every
// write to codex under the same deadline, every line read at most
// MaxLine (a longer one is skipped whole). Codex's stderr and the text of
// its errors are never logged or shown: they can repeat a key or what a
// login page sent back. Codex's own requests to its client (thread
// approvals, external token refreshes) are answered "not supported".
package codex
