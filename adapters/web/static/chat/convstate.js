// The conversation topic's reducer: what a conversation snapshot
// (ConversationSnapshot) and the ChatEvents after its cursor add up to.
// The rules:
//   - item.upsert replaces the item with its id (a new id goes last);
//     item.remove drops one; item.text_delta appends to an item's
//     `markdown`. The conversation.* events restate the status, the
//     configuration, the summary and the held queue whole.
//   - every event carries {generation, sequence}: an event of the current
//     generation at or below the last applied sequence was applied
//     already (a replay overlapping what the page holds) and is ignored,
//     so nothing shows twice; one of another generation, a delta for an
//     item the page does not hold or an event without its stamps cannot
//     apply (RELOAD: take the snapshot again).
//   - an event of a type this page does not know is ignored, as the
//     contract says clients do with what they do not know.
// Items are replaced, never changed in place, so a component that draws
// one item redraws only when that item changed.

export const APPLIED = 'applied';
export const IGNORED = 'ignored';
export const RELOAD = 'reload';

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** fromSnapshot returns the state a snapshot describes; `version` counts changes. */
export function fromSnapshot(snap) {
  const items = new Map();
  const order = [];
  for (const it of snap.items || []) {
    if (!isObj(it) || typeof it.id !== 'string') continue;
    if (!items.has(it.id)) order.push(it.id);
    items.set(it.id, it);
  }
  return {
    conversation: snap.conversation,
    configuration: snap.configuration || {},
    statusMessage: '',
    items,
    order,
    queued: snap.queued || [],
    generation: '',
    sequence: -1,
    version: 0,
  };
}

/** applyEvent applies one ChatEvent to state in place and says what it did. */
export function applyEvent(state, ev) {
  if (!isObj(ev) || typeof ev.generation !== 'string' || !Number.isSafeInteger(ev.sequence)) return RELOAD;
  if (state.generation) {
    if (ev.generation !== state.generation) return RELOAD;
    if (ev.sequence <= state.sequence) return IGNORED;
  }
  const r = apply(state, ev);
  if (r === RELOAD) return r;
  state.generation = ev.generation;
  state.sequence = ev.sequence;
  if (r === APPLIED) state.version++;
  return r;
}

function apply(state, ev) {
  switch (ev.type) {
    case 'item.upsert': {
      const it = ev.item;
      if (!isObj(it) || typeof it.id !== 'string') return RELOAD;
      if (!state.items.has(it.id)) state.order.push(it.id);
      state.items.set(it.id, it);
      return APPLIED;
    }
    case 'item.remove':
      if (state.items.delete(ev.itemId)) state.order = state.order.filter((id) => id !== ev.itemId);
      return APPLIED;
    case 'item.text_delta': {
      const it = state.items.get(ev.itemId);
      if (!it || typeof ev.delta !== 'string') return RELOAD;
      state.items.set(ev.itemId, { ...it, markdown: (it.markdown || '') + ev.delta });
      return APPLIED;
    }
    case 'conversation.status':
      state.conversation = { ...state.conversation, status: ev.status };
      state.statusMessage = typeof ev.message === 'string' ? ev.message : '';
      return APPLIED;
    case 'conversation.configuration':
      state.configuration = isObj(ev.configuration) ? ev.configuration : {};
      return APPLIED;
    case 'conversation.updated':
      if (!isObj(ev.conversation)) return RELOAD;
      state.conversation = ev.conversation;
      return APPLIED;
    case 'conversation.queue':
      if (!Array.isArray(ev.queued)) return RELOAD;
      state.queued = ev.queued;
      return APPLIED;
  }
  return IGNORED;
}

/** pendingRequest is the first permission or question still waiting for an answer, or null. */
export function pendingRequest(state) {
  for (const id of state.order) {
    const it = state.items.get(id);
    if ((it.kind === 'permission' || it.kind === 'question') && it.state === 'pending') return it;
  }
  return null;
}
