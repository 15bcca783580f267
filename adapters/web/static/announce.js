// announce tells screen readers about a change they cannot see happen
// (a workspace that now awaits you, an action that finished), through the
// page's one polite live region. Announcements that come together are
// joined and said at most once a second, so a busy Hub does not drown the
// reader.
let pending = [];
let timer = 0;

export function announce(text) {
  pending.push(text);
  if (timer) return;
  timer = setTimeout(() => {
    timer = 0;
    const el = document.getElementById('announce');
    const said = pending.slice(-3).join('. ');
    pending = [];
    if (el) el.textContent = said;
  }, 1000);
}
