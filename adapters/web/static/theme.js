// Light, dark, or whatever the system says (the default). The choice is
// this browser's, kept in localStorage; the stylesheet does the rest.
const KEY = 'wharf.theme';

export function theme() { return localStorage.getItem(KEY) || 'system'; }

export function applyTheme(t = theme()) {
  if (t === 'light' || t === 'dark') document.documentElement.dataset.theme = t;
  else delete document.documentElement.dataset.theme;
}

export function setTheme(t) {
  if (t === 'system') localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, t);
  applyTheme(t);
}
