// The document topic's reducer: what a workspace's DocumentUpdate frames
// (api/openapi.yaml: DocumentSnapshot, DocumentPatch) add up to. The
// rules are the Hub's own (hub/internal/docstate), so the page and the Hub
// agree on every update:
//   - an update whose epoch is empty or whose revision is not a safe
//     integer >= 0 cannot apply (resync);
//   - a snapshot of another epoch (or onto no state) replaces everything;
//     of the same epoch it must have the same context (compareTarget,
//     scope), is ignored below the current revision and replaces the
//     state at or above it;
//   - a patch needs a state of its epoch and context and
//     previousRevision < revision; at or below the current revision it is
//     ignored; otherwise previousRevision must equal the current revision
//     (revisions are not contiguous);
//   - an update is checked whole before anything changes, so a resync or
//     an ignored update leaves the state exactly as it was.
// On 'resync' the caller asks the Hub for a fresh snapshot.

export const APPLIED = 'applied';
export const IGNORED = 'ignored';
export const RESYNC = 'resync';

/** newDocState returns the empty state; `version` counts applied updates. */
export function newDocState() {
  return { epoch: '', revision: 0, ctx: '', header: {}, roots: [], version: 0 };
}

const isRev = (v) => Number.isSafeInteger(v) && v >= 0;
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isRoot = (r) => isObj(r) && typeof r.id === 'string' && has(r, 'label') && has(r, 'path') && has(r, 'hiddenCount');

/** context names the watch context of an update, or '' when invalid. */
function context(u) {
  const ct = u.compareTarget;
  const sc = u.scope;
  if ((ct !== 'base' && ct !== 'last-commit') || !isObj(sc)) return '';
  if (sc.kind === 'folder') return ct + '|folder';
  if (sc.kind === 'file' && typeof sc.documentId === 'string' && sc.documentId) return ct + '|file|' + sc.documentId;
  return '';
}

/** meta checks one DocumentMeta against the update's revision. */
function meta(d, rev) {
  if (!isObj(d) || typeof d.id !== 'string' || typeof d.rootId !== 'string' || typeof d.relativePath !== 'string') return false;
  if (has(d, 'revision') && (!isRev(d.revision) || d.revision > rev)) return false;
  return true;
}

const SNAPSHOT_FIELDS = ['discovery', 'repositoryState', 'workspaceApiRevision', 'roots', 'repositories', 'compareTarget',
  'initialFollow', 'defaultDocumentId', 'changedId', 'generatedAt', 'build', 'scope'];
const PATCH_FIELDS = ['generatedAt', 'scope', 'compareTarget', 'unscopedFingerprint', 'upserts', 'removals', 'changedId'];

/**
 * applyUpdate applies one DocumentUpdate to state in place and says what
 * it did: APPLIED (state.version grew), IGNORED or RESYNC.
 */
export function applyUpdate(state, u) {
  if (!isObj(u) || typeof u.epoch !== 'string' || !u.epoch || !isRev(u.revision)) return RESYNC;
  if (u.kind === 'snapshot') return snapshot(state, u);
  if (u.kind === 'patch') return patch(state, u);
  return RESYNC;
}

function snapshot(state, u) {
  const ctx = context(u);
  if (!ctx) return RESYNC;
  if (state.epoch && u.epoch === state.epoch) {
    if (ctx !== state.ctx) return RESYNC;
    if (u.revision < state.revision) return IGNORED;
  }
  if (!SNAPSHOT_FIELDS.every((f) => has(u, f)) || !Array.isArray(u.roots)) return RESYNC;
  const roots = [];
  const ids = new Set();
  for (const r of u.roots) {
    if (!isRoot(r) || ids.has(r.id) || !Array.isArray(r.docs)) return RESYNC;
    ids.add(r.id);
    const docs = new Map();
    for (const d of r.docs) {
      if (!meta(d, u.revision) || d.rootId !== r.id || docs.has(d.id)) return RESYNC;
      docs.set(d.id, d);
    }
    roots.push({ id: r.id, label: r.label, path: r.path, hiddenCount: r.hiddenCount, docs });
  }
  const header = {};
  for (const f of [...SNAPSHOT_FIELDS, 'latestChange', 'unscopedFingerprint', 'terminal']) {
    if (f !== 'roots' && has(u, f)) header[f] = u[f];
  }
  Object.assign(state, { epoch: u.epoch, revision: u.revision, ctx, header, roots, version: state.version + 1 });
  return APPLIED;
}

function patch(state, u) {
  if (!state.epoch || u.epoch !== state.epoch) return RESYNC;
  if (context(u) !== state.ctx) return RESYNC;
  const prev = u.previousRevision;
  if (!isRev(prev) || u.revision <= prev) return RESYNC;
  if (u.revision <= state.revision) return IGNORED;
  if (prev !== state.revision || !PATCH_FIELDS.every((f) => has(u, f))) return RESYNC;
  if (!Array.isArray(u.upserts) || !Array.isArray(u.removals)) return RESYNC;

  // The root set once the patch's roots replace it: upserts and removals
  // apply after the replacement, so they are checked against it.
  const current = new Map(state.roots.map((r) => [r.id, r]));
  let next = null;
  if (has(u, 'roots')) {
    if (!Array.isArray(u.roots)) return RESYNC;
    next = new Map();
    for (const r of u.roots) {
      if (!isRoot(r) || next.has(r.id)) return RESYNC;
      next.set(r.id, r);
    }
  }
  const known = (id) => (next ? next.has(id) : current.has(id));
  const upserted = new Set();
  for (const d of u.upserts) {
    if (!meta(d, u.revision) || !known(d.rootId)) return RESYNC;
    const cur = current.get(d.rootId)?.docs.get(d.id);
    if (cur && has(cur, 'revision') && has(d, 'revision') && d.revision < cur.revision) return RESYNC;
    const k = d.rootId + '\n' + d.id;
    if (upserted.has(k)) return RESYNC;
    upserted.add(k);
  }
  for (const rm of u.removals) {
    if (!isObj(rm) || typeof rm.rootId !== 'string' || typeof rm.id !== 'string') return RESYNC;
    if (!known(rm.rootId) || upserted.has(rm.rootId + '\n' + rm.id)) return RESYNC;
  }

  // Valid: apply.
  if (next) {
    state.roots = [...next.values()].map((r) => {
      const kept = current.get(r.id);
      return { id: r.id, label: r.label, path: r.path, hiddenCount: r.hiddenCount, docs: kept ? kept.docs : new Map() };
    });
  }
  const byId = new Map(state.roots.map((r) => [r.id, r]));
  for (const rm of u.removals) byId.get(rm.rootId).docs.delete(rm.id);
  for (const d of u.upserts) byId.get(d.rootId).docs.set(d.id, d);
  const h = state.header;
  state.revision = u.revision;
  h.generatedAt = u.generatedAt;
  h.unscopedFingerprint = u.unscopedFingerprint;
  h.changedId = u.changedId;
  if (u.changedId !== null) h.latestChange = { id: u.changedId, revision: u.revision };
  for (const f of ['defaultDocumentId', 'discovery', 'repositories', 'repositoryState']) {
    if (has(u, f) && (u[f] !== null || f === 'defaultDocumentId')) h[f] = u[f];
  }
  state.version++;
  return APPLIED;
}
