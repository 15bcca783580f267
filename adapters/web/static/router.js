// Client-side routes over the History API. The Hub serves the same page
// (the shell) at each of them, so a reload or a shared link lands where
// it points.
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';

const listeners = new Set();

function here() { return location.pathname + location.search; }

/** navigate goes to an in-app path, adding a history entry unless replace. */
export function navigate(to, { replace = false } = {}) {
  if (to === here()) return;
  history[replace ? 'replaceState' : 'pushState'](null, '', to);
  for (const fn of listeners) fn();
}

window.addEventListener('popstate', () => { for (const fn of listeners) fn(); });

/** useLocation re-renders on every navigation and returns {path, query}. */
export function useLocation() {
  const [, set] = useState(0);
  useEffect(() => {
    const fn = () => set((n) => n + 1);
    listeners.add(fn);
    return () => listeners.delete(fn);
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/**
 * safeNext returns an in-app path to return to after logging in: only a
 * path of this origin ("/..." but not "//host" or "/\\host"), else "/".
 */
export function safeNext(next) {
  if (typeof next !== 'string' || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  if (next.startsWith('/login')) return '/';
  return next;
}

/** loginPath is the login page, returning to the current page afterwards. */
export function loginPath(reason) {
  const q = new URLSearchParams();
  const next = here();
  if (next !== '/' && !next.startsWith('/login')) q.set('next', next);
  if (reason) q.set('reason', reason);
  const s = q.toString();
  return '/login' + (s ? '?' + s : '');
}

/** Link is an anchor that navigates in-app (a modified click opens a tab as usual). */
export function Link({ href, children, ...rest }) {
  const click = (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return html`<a href=${href} onClick=${click} ...${rest}>${children}</a>`;
}

/**
 * addPath is the add page browsing folder p on the machine backend names
 * (the Hub's own when absent or 'local').
 */
export const addPath = (p, backend) => '/add?path=' + encodeURIComponent(p) +
  (backend && backend !== 'local' ? '&backend=' + encodeURIComponent(backend) : '');

/** wsPath is a workspace's page. */
export const wsPath = (id) => '/w/' + encodeURIComponent(id);

/** convPath is the page of conversation cid of workspace id. */
export const convPath = (id, cid) => wsPath(id) + '/c/' + encodeURIComponent(cid);
