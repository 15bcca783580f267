// Wharf's service worker: it shows the push messages the Hub sends to an
// enrolled device (PushPayload in api/openapi.yaml) and opens the page a
// notification names when it is clicked. Nothing else: no caching, no
// offline pages, no fetch handler (so the browser never routes the
// dashboard's requests through it).
//
// The Hub serves this file at /sw.js, at the root scope, revalidated on
// every update check: its URL must never change, or browsers would keep
// running the worker they registered first. It is a classic script (no
// imports), which every browser that has push runs. The Hub replaces the
// quoted file name of ICON with the icon's hashed URL.
'use strict';

const ICON = 'icon-192.png';

/** The notification for a message that is not a PushPayload. */
const generic = { title: 'Wharf', body: 'Something happened in Wharf. Open it to see what.', tag: 'wharf', url: '/' };

/**
 * parse reads a push message's data as a PushPayload, or returns null for
 * anything else: no data, not JSON, another shape, or a URL that leaves
 * the dashboard's origin.
 */
function parse(data) {
  if (!data) return null;
  let p;
  try { p = data.json(); } catch { return null; }
  if (!p || typeof p !== 'object') return null;
  const text = (v, max) => typeof v === 'string' && v.length <= max;
  if (!(typeof p.id === 'string' && /^[0-9a-f]{64}$/.test(p.id)) || !text(p.device, 128) || p.device === '' ||
      !text(p.title, 120) || !text(p.body, 200) || !inApp(p.url)) return null;
  return p;
}

/** inApp reports whether url is a path of this origin ("/…", never "//…" or "/\…"). */
function inApp(url) {
  return typeof url === 'string' && url.startsWith('/') && !url.startsWith('//') && !url.startsWith('/\\');
}

self.addEventListener('install', () => {
  // A new version of this script takes over at once: it keeps no state
  // that an older one would need to hand over.
  self.skipWaiting();
});

self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

self.addEventListener('push', (event) => {
  const p = parse(event.data);
  // Always show a notification: a push that shows none is a broken promise
  // to the browser (userVisibleOnly), which then shows one of its own.
  // The payload's id as the tag: the same occurrence delivered twice
  // replaces its notification instead of adding one.
  const n = p || generic;
  const options = { body: n.body, tag: p ? p.id : generic.tag, icon: ICON, data: { url: n.url } };
  if (p) {
    const at = Date.parse(p.createdAt);
    if (Number.isFinite(at)) options.timestamp = at;
  }
  event.waitUntil(self.registration.showNotification(n.title || 'Wharf', options)
    .then(() => (p ? acknowledge(p) : undefined)));
});

/**
 * acknowledge tells the Hub the device showed payload p, so Settings can
 * tell a message that arrived from one the push service dropped. The
 * session cookie authenticates it; a failure (signed out, offline, an
 * expired id) changes nothing for the person and is ignored.
 */
function acknowledge(p) {
  return fetch('/api/hub/notifications/acknowledgements', {
    method: 'POST',
    credentials: 'same-origin',
    cache: 'no-store',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ device: p.device, id: p.id }),
  }).then(() => undefined, () => undefined);
}

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const data = event.notification.data || {};
  const url = new URL(inApp(data.url) ? data.url : '/', self.location.origin).href;
  event.waitUntil(openPage(url));
});

/**
 * openPage brings an open dashboard window to the front at url, or opens
 * a new one. Only a window this worker controls can be navigated; any
 * other is left alone.
 */
async function openPage(url) {
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const w of windows) {
    if (new URL(w.url).origin !== self.location.origin) continue;
    try {
      const focused = await w.focus();
      const at = await (focused || w).navigate(url);
      if (at) return at;
    } catch {
      // Not ours to navigate (uncontrolled) or gone: try the next, then a new window.
    }
  }
  return self.clients.openWindow(url);
}

// pushsubscriptionchange: nothing here. The page renews the subscription
// when it next loads (push.js), with the person's session and preferences,
// which a worker cannot read.
