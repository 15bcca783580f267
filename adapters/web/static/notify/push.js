// Web Push on this browser: what it can do, the service worker (/sw.js),
// its push subscription, and the device id the Hub gave it. The id and a
// digest of the subscription's endpoint are kept in localStorage, per
// user, so that a later load can tell whether the browser dropped or
// replaced the subscription; the endpoint and the keys are never kept.
import { ApiError, notifications } from '../api.js';
import { userName } from '../signin.js';

const WORKER = '/sw.js';

// The page's Trusted Types allow one policy (web.go), this one: it lets
// the service worker's URL, and nothing else, reach register().
const policy = window.trustedTypes ? window.trustedTypes.createPolicy('wharf-worker', {
  createScriptURL: (u) => { if (u !== WORKER) throw new TypeError(`only ${WORKER} may run as a worker`); return u; },
}) : null;

/**
 * support says whether this browser can receive push: 'ok'; 'ios' for an
 * iPhone or iPad that is not running Wharf from the Home Screen (Safari
 * has push only there); 'insecure' for a page not served over HTTPS;
 * 'none' for a browser without Web Push.
 */
export function support() {
  const ios = /iPhone|iPad|iPod/.test(navigator.userAgent) || (navigator.platform === 'MacIntel' && navigator.maxTouchPoints > 1);
  const installed = navigator.standalone === true || matchMedia('(display-mode: standalone)').matches;
  if (ios && !installed) return 'ios';
  if (!window.isSecureContext) return 'insecure';
  if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window)) return 'none';
  return 'ok';
}

/** permission is the browser's answer for notifications: granted, denied or default. */
export const permission = () => (window.Notification ? Notification.permission : 'denied');

const key = () => 'wharf.push.' + userName();

/** saved returns {device, endpoint (a digest)} this browser enrolled for the user, or null. */
export function saved() {
  try {
    const v = JSON.parse(localStorage.getItem(key()) || 'null');
    return v && typeof v.device === 'string' && v.device ? v : null;
  } catch { return null; }
}

const remember = async (device, sub) => localStorage.setItem(key(), JSON.stringify({ device, endpoint: await digest(sub.endpoint) }));

/** forget drops what this browser kept of its device. */
export const forget = () => localStorage.removeItem(key());

async function digest(s) {
  const sum = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(s));
  return [...new Uint8Array(sum)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** registerWorker registers the service worker and returns its registration once it is active (within 10 s). */
export async function registerWorker() {
  await navigator.serviceWorker.register(policy ? policy.createScriptURL(WORKER) : WORKER, { scope: '/', updateViaCache: 'none' });
  let timer = 0;
  const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('The service worker did not start. Reload the page and try again.')), 10000); });
  try {
    return await Promise.race([navigator.serviceWorker.ready, late]);
  } finally { clearTimeout(timer); }
}

/** bytes decodes unpadded base64url. */
function bytes(b64) {
  const s = atob(b64.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

/**
 * subscription returns the registration's push subscription for the
 * Hub's key (base64url), making one when there is none, or when it was
 * made for another key or renew asks for a new one. created tells
 * whether it is new.
 */
async function subscription(reg, publicKey, renew) {
  const want = bytes(publicKey);
  let sub = await reg.pushManager.getSubscription();
  const had = sub?.options?.applicationServerKey;
  if (sub && (renew || (had && !sameBytes(new Uint8Array(had), want)))) {
    await sub.unsubscribe().catch(() => false);
    sub = null;
  }
  if (sub) return { sub, created: false };
  return { sub: await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: want }), created: true };
}

const sameBytes = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);

/** wire is a subscription as NotificationSubscription: base64url without padding, as the Hub takes it. */
function wire(sub) {
  const j = sub.toJSON();
  const unpad = (s) => String(s || '').replace(/=+$/, '');
  return { endpoint: j.endpoint, expirationTime: j.expirationTime ?? null, keys: { p256dh: unpad(j.keys?.p256dh), auth: unpad(j.keys?.auth) } };
}

/**
 * enable enrolls this browser with prefs ({workspaceIds, allWorkspaces,
 * needsAnswer, completed}) and returns the Hub's NotificationState. Call
 * it straight from the person's click: it asks for permission first.
 * When the Hub refuses a subscription the browser already had (it is
 * enrolled for another account, or as a device this browser forgot), it
 * makes a new one and tries once more.
 */
export async function enable(state, prefs) {
  const answer = await Notification.requestPermission();
  if (answer !== 'granted') {
    throw new Error(answer === 'denied' ? blocked : 'Notifications were not allowed. Try again and choose Allow.');
  }
  const reg = await registerWorker();
  let { sub, created } = await subscription(reg, state.publicKey, false);
  const mine = saved();
  const put = () => notifications.enroll({ ...(mine ? { id: mine.device } : {}), subscription: wire(sub), ...prefs });
  let r;
  try {
    r = await put();
  } catch (e) {
    if (created || !(e instanceof ApiError) || e.status !== 409) throw e;
    ({ sub } = await subscription(reg, state.publicKey, true));
    r = await put();
  }
  await remember(r.device.id, sub);
  return r;
}

export const blocked = "Notifications are blocked for this site. Allow them in the browser's site settings, then try again.";

/** disable removes the device from the Hub and drops the browser's subscription. */
export async function disable(device) {
  try {
    await notifications.remove(device);
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 404) throw e; // already gone
  }
  forget();
  const reg = await navigator.serviceWorker.getRegistration('/');
  const sub = await reg?.pushManager.getSubscription();
  await sub?.unsubscribe().catch(() => false);
}

let renewing = null;

/**
 * renew runs once per page load: when this browser enrolled a device
 * (permission granted) and the browser has since dropped or replaced its
 * push subscription, it subscribes again and enrolls the new
 * subscription with the device's preferences as the Hub has them. A
 * device enrolled under an earlier sign-in is left for the person to
 * turn on again (the Hub sends nothing to it until then); one the Hub no
 * longer knows is forgotten.
 */
export function renew() {
  renewing ||= (async () => {
    const mine = saved();
    if (!mine || support() !== 'ok' || permission() !== 'granted') return;
    const reg = await registerWorker();
    const now = await reg.pushManager.getSubscription();
    if (now && mine.endpoint === await digest(now.endpoint)) return;
    const state = await notifications.get(mine.device);
    if (!state.configured) return;
    if (!state.device) { forget(); return; }
    const d = state.device;
    if (!d.active) return;
    const { sub } = await subscription(reg, state.publicKey, false);
    const r = await notifications.enroll({ id: d.id, subscription: wire(sub), workspaceIds: d.workspaceIds,
      allWorkspaces: d.allWorkspaces, needsAnswer: d.needsAnswer, completed: d.completed });
    await remember(r.device.id, sub);
  })().catch(() => {}); // a later load tries again; Settings shows the device's state
  return renewing;
}
