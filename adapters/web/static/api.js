// A client of the Hub's documented HTTP API (api/openapi.yaml), with the
// session cookie that POST /login sets. Same-origin fetches carry the
// cookie and pass the Hub's same-origin check; nothing here uses a route
// outside the contract.

/** ApiError is a refused or failed request, with words for people. */
export class ApiError extends Error {
  /**
   * @param {number} status HTTP status, 0 when the Hub did not answer
   * @param {string} message the Hub's `error`, or our own words
   * @param {object|null} body the whole error body (needsStop, needsInit, retainedPath…)
   * @param {number} retryAfter seconds to wait, from Retry-After (0 when absent)
   */
  constructor(status, message, body = null, retryAfter = 0) {
    super(message);
    this.status = status;
    this.body = body;
    this.retryAfter = retryAfter;
  }
}

let onExpired = () => {};

/** setExpiredHandler names what to do when the session is gone (a 401). */
export function setExpiredHandler(fn) { onExpired = fn; }

/** sessionExpired runs the handler: the login page, then back here. */
export function sessionExpired() { onExpired(); }

const unreachable = 'The Hub did not answer. Check that wharf serve is running and that this device can reach it.';

/**
 * request sends one API request and returns the parsed JSON answer (null
 * for an empty one). A refusal throws ApiError with the Hub's message; a
 * 401 also sends the user to the login page, unless opts.login says the
 * request is the login itself (where 401 means a wrong password).
 */
export async function request(method, path, body, opts = {}) {
  const init = { method, credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, unreachable);
  }
  let data = null;
  const text = await res.text().catch(() => '');
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (res.ok) return data;
  const message = data && typeof data.error === 'string' && data.error
    ? sentence(data.error)
    : `The Hub answered ${res.status} ${res.statusText || ''}`.trim() + '.';
  const wait = Number.parseInt(res.headers.get('Retry-After') || '0', 10);
  const err = new ApiError(res.status, message, data, Number.isFinite(wait) ? wait : 0);
  if (res.status === 401 && !opts.login) onExpired();
  throw err;
}

/** sentence capitalizes the Hub's message and ends it with a full stop. */
export function sentence(s) {
  s = String(s).trim();
  if (!s) return s;
  s = s[0].toUpperCase() + s.slice(1);
  return /[.!?]$/.test(s) ? s : s + '.';
}

const enc = encodeURIComponent;

/** The documented operations the dashboard uses, by operationId. */
export const hub = {
  login: (name, password, deviceLabel) => request('POST', '/login', { name, password, deviceLabel }, { login: true }),
  state: () => request('GET', '/api/hub/state'),
  /** signedIn reports whether the cookie holds a session, without the 401 handling. */
  signedIn: () => request('GET', '/api/hub/state', undefined, { login: true }).then(() => true, () => false),
  sessions: () => request('GET', '/api/hub/sessions'),
  revokeSession: (handle) => request('POST', `/api/hub/sessions/${enc(handle)}/revoke`),
  browse: (path, backend) => {
    const q = new URLSearchParams();
    if (path) q.set('path', path);
    if (backend && backend !== 'local') q.set('backend', backend);
    const qs = q.toString();
    return request('GET', '/api/hub/browse' + (qs ? '?' + qs : ''));
  },
  hosts: () => request('GET', '/api/hub/hosts'),
  addHost: (name, destination) => request('POST', '/api/hub/hosts', { name, destination }),
  checkHost: (name) => request('POST', `/api/hub/hosts/${enc(name)}/check`),
  removeHost: (name) => request('POST', `/api/hub/hosts/${enc(name)}/remove`),
  createFolder: (parent, name, backend) => request('POST', '/api/hub/folders/create', { parent, name, backend }),
  renameFolder: (path, name, stop, backend) => request('POST', '/api/hub/folders/rename', { path, name, stop, backend }),
  removeFolder: (path, stop, backend) => request('POST', '/api/hub/folders/remove', { path, stop, backend }),
  defaults: () => request('GET', '/api/hub/settings/workspace-defaults'),
  setDefaults: (parent) => request('POST', '/api/hub/settings/workspace-defaults', { defaultWorkspaceParent: parent }),
  configure: (req) => request('POST', '/api/hub/workspaces/configure', req),
  createRepository: (req) => request('POST', '/api/hub/workspaces/create', req),
  rename: (id, displayName) => request('POST', `/api/hub/workspaces/${enc(id)}/display-name`, { displayName }),
  start: (id) => request('POST', `/api/hub/sessions/${enc(id)}/start`),
  stop: (id) => request('POST', `/api/hub/sessions/${enc(id)}/stop`),
  forget: (id) => request('POST', `/api/hub/workspaces/${enc(id)}/forget`),
  personalState: (id) => request('GET', `/s/${enc(id)}/api/personal-state`),
  patchPersonalState: (id, patch) => request('PATCH', `/s/${enc(id)}/api/personal-state`, patch),
  activityViewed: (id) => request('POST', `/s/${enc(id)}/api/activity-viewed`),
  liveSubscriptions: (streamId, change) => request('POST', `/api/hub/live/${enc(streamId)}/subscriptions`, change),
};

/** A workspace's shells (tag `shells`): list, open, rename, close. */
const shellPath = (ws, id) => `/s/${enc(ws)}/api/shells` + (id ? `/${enc(id)}` : '');

export const shells = {
  list: (ws) => request('GET', shellPath(ws)),
  /** create posts {label?, cols?, rows?}. */
  create: (ws, req) => request('POST', shellPath(ws), req),
  rename: (ws, id, label) => request('PATCH', shellPath(ws, id), { label }),
  close: (ws, id) => request('DELETE', shellPath(ws, id)),
};

/**
 * The credentials family (tags `credentials`, `credential-tools`). The
 * bodies that carry a passphrase, a private key or a token go straight to
 * the Hub and are never kept here.
 */
const cred = (id, op) => `/api/hub/credentials/${enc(id)}/${op}`;

export const creds = {
  list: () => request('GET', '/api/hub/credentials'),
  publicKey: (id) => request('GET', cred(id, 'public-key')),
  generateSsh: (name, capabilities, passphrase) => request('POST', '/api/hub/credentials/ssh/generate', { name, capabilities, passphrase }),
  importSsh: (name, capabilities, privateKey, passphrase) => request('POST', '/api/hub/credentials/ssh/import',
    passphrase ? { name, capabilities, privateKey, passphrase } : { name, capabilities, privateKey }),
  generateOpenPgp: (name, userId, passphrase) => request('POST', '/api/hub/credentials/openpgp/generate', { name, userId, passphrase }),
  importOpenPgp: (name, privateKey) => request('POST', '/api/hub/credentials/openpgp/import', { name, privateKey }),
  /** createToken posts {name, host, username?, token, capabilities}. */
  createToken: (req) => request('POST', '/api/hub/credentials/token', req),
  unlock: (id, passphrase) => request('POST', cred(id, 'unlock'), { passphrase }),
  lock: (id) => request('POST', cred(id, 'lock'), {}),
  enable: (id) => request('POST', cred(id, 'enable'), {}),
  disable: (id) => request('POST', cred(id, 'disable'), {}),
  test: (id) => request('POST', cred(id, 'test'), {}),
  remove: (id, unassign) => request('POST', cred(id, 'delete'), unassign ? { confirm: true, unassign: true } : { confirm: true }),
  /** assign posts {workspaceId, role, host?, replace?, usePolicy?}. */
  assign: (id, req) => request('POST', cred(id, 'assign'), req),
  /** unassign posts {workspaceId, role?, host?, stop?}. */
  unassign: (id, req) => request('POST', cred(id, 'unassign'), req),
  /** uses is the credential's use log, newest first. */
  uses: (id) => request('GET', cred(id, 'uses')),
  /** approvals lists the uses held for their owner's answer, oldest first. */
  approvals: () => request('GET', '/api/hub/credential-approvals'),
  decide: (approvalId, allow) => request('POST', `/api/hub/credential-approvals/${enc(approvalId)}`, { allow }),
  tools: () => request('GET', '/api/hub/credential-tools'),
  setTool: (tool, path) => request('POST', `/api/hub/credential-tools/${enc(tool)}`, { path }),
  testTool: (tool) => request('POST', `/api/hub/credential-tools/${enc(tool)}/test`, {}),
};

/**
 * The workspace chat API (tag `chat`), forwarded by the Hub under
 * /s/{workspaceId}/api/chat/. Conversation and request ids are opaque
 * and hold characters such as `:`, so every path segment is encoded.
 */
const chatPath = (ws, rest) => `/s/${enc(ws)}/api/chat/${rest}`;
const conv = (ws, cid, rest = '') => chatPath(ws, `conversations/${enc(cid)}${rest}`);

export const chat = {
  agents: (ws) => request('GET', chatPath(ws, 'agents')),
  conversations: (ws) => request('GET', chatPath(ws, 'conversations')),
  create: (ws, agent, title) => request('POST', chatPath(ws, 'conversations'), title ? { agent, title } : { agent }),
  snapshot: (ws, cid) => request('GET', conv(ws, cid)),
  rename: (ws, cid, title) => request('POST', conv(ws, cid, '/rename'), { title }),
  close: (ws, cid) => request('POST', conv(ws, cid, '/close'), {}),
  /** send posts {text?, attachments?, requestId}: 202 delivered or held. */
  send: (ws, cid, message) => request('POST', conv(ws, cid, '/messages'), message),
  removeHeld: (ws, cid, messageId) => request('DELETE', conv(ws, cid, `/messages/${enc(messageId)}`)),
  cancel: (ws, cid) => request('POST', conv(ws, cid, '/cancel'), {}),
  answerPermission: (ws, cid, requestId, choiceId) => request('POST', conv(ws, cid, `/permissions/${enc(requestId)}`), { choiceId }),
  answerQuestion: (ws, cid, requestId, answer) => request('POST', conv(ws, cid, `/questions/${enc(requestId)}`), answer),
  configure: (ws, cid, change) => request('POST', conv(ws, cid, '/configuration'), change),
};

/**
 * Clone jobs (tag `clone-jobs`). An answer typed into a job's terminal
 * goes straight to the Hub and is never kept here; the job's events are
 * read by clonestream.js.
 */
const job = (id, op) => `/api/hub/clone-jobs/${enc(id)}/${op}`;

export const clones = {
  /** create posts {url, dest, folderName?, displayName?, credentialId?, retainedAuthentication?, signing?, start}. */
  create: (req) => request('POST', '/api/hub/clone-jobs', req),
  eventsPath: (id) => job(id, 'events'),
  input: (id, input) => request('POST', job(id, 'input'), { input }),
  cancel: (id) => request('POST', job(id, 'cancel')),
};

/**
 * Worktrees (the worktrees tag). Every answer of the family but the
 * inventory is `{ok, ...}`: a refusal is a completed request (`ok:
 * false`, `error: {code, message, retry}`), not a thrown ApiError.
 */
const wt = (op) => `/api/hub/worktrees/${op}`;

export const worktrees = {
  list: (source) => request('GET', `/api/hub/worktrees?source=${enc(source)}`),
  fetch: (source) => request('POST', wt('fetch'), { sourceWorkspaceId: source }),
  /** create posts {sourceWorkspaceId, mode, branch?, base?: {kind, ref}, start}. */
  create: (req) => request('POST', wt('create'), req),
  open: (source, reference, start) => request('POST', wt('open'), { sourceWorkspaceId: source, reference, start }),
  register: (source, reference) => request('POST', wt('register'), { sourceWorkspaceId: source, reference }),
  forget: (source, reference) => request('POST', wt('forget'), { sourceWorkspaceId: source, reference }),
  preflight: (source, reference) => request('POST', wt('preflight-delete'), { sourceWorkspaceId: source, reference }),
  remove: (source, reference, stop, localDataFingerprint) => request('POST', wt('delete'),
    localDataFingerprint ? { sourceWorkspaceId: source, reference, confirm: true, stop, localDataFingerprint }
      : { sourceWorkspaceId: source, reference, confirm: true, stop }),
};

/**
 * Agent accounts (the agent-accounts tag): the logins of the Hub
 * machine's coding agents. Every operation answers the whole listing
 * (AgentAccountsSnapshot). A key, a code or a pasted address goes
 * straight to the Hub in one request and is never kept here; a refusal
 * names the input concerned in `field` (ApiError.body.field).
 */
const acct = (op) => `/api/hub/agent-accounts/${op}`;
const attemptOp = (id, op) => acct(`attempts/${enc(id)}/${op}`);
const withAnswers = (req, answers) => (answers && Object.keys(answers).length ? { ...req, answers } : req);

export const accounts = {
  list: () => request('GET', '/api/hub/agent-accounts'),
  key: (agent, target, method, key, answers) => request('POST', acct('key'), withAnswers({ agent, target, method, key }, answers)),
  login: (agent, target, method, answers) => request('POST', acct('login'), withAnswers({ agent, target, method }, answers)),
  code: (attemptId, code) => request('POST', attemptOp(attemptId, 'code'), { code }),
  redirect: (attemptId, address) => request('POST', attemptOp(attemptId, 'redirect'), { address }),
  cancel: (attemptId) => request('POST', attemptOp(attemptId, 'cancel'), {}),
  logout: (agent, target, credential) => request('POST', acct('logout'), { agent, target, credential }),
  activate: (agent, credential) => request('POST', acct('activate'), { agent, credential }),
};

/**
 * Push notifications (the notifications tag) for this browser's device.
 * The subscription goes to the Hub on enrollment and never comes back:
 * no answer carries its endpoint or keys.
 */
const notifyPath = (device) => `/api/hub/notifications?device=${enc(device)}`;

export const notifications = {
  get: (device) => request('GET', device ? notifyPath(device) : '/api/hub/notifications'),
  /** enroll puts {id?, subscription, workspaceIds, allWorkspaces, needsAnswer, completed}. */
  enroll: (req) => request('PUT', '/api/hub/notifications', req),
  remove: (device) => request('DELETE', notifyPath(device)),
  test: (device) => request('POST', `/api/hub/notifications/test?device=${enc(device)}`),
};
