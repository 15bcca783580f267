// The login page: name, password and a device label for the device list,
// prefilled from the browser. POST /login sets the session cookie; a 429
// shows how long to wait and holds the button until then.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { hub, ApiError } from '../api.js';
import { navigate, safeNext } from '../router.js';
import { ErrorNote, Logo, usePageTitle } from '../ui.js';
import { setSignedIn, userName } from '../signin.js';

/** deviceLabel names this browser the way a person would: "Firefox on Linux". */
export function deviceLabel(ua = navigator.userAgent) {
  const browser = /Edg\//.test(ua) ? 'Edge'
    : /Firefox\//.test(ua) ? 'Firefox'
      : /(Chrome|Chromium|CriOS)\//.test(ua) ? 'Chrome'
        : /Safari\//.test(ua) ? 'Safari' : 'Browser';
  const os = /iPhone/.test(ua) ? 'iPhone'
    : /iPad/.test(ua) ? 'iPad'
      : /Android/.test(ua) ? 'Android'
        : /Mac OS X|Macintosh/.test(ua) ? 'Mac'
          : /Windows/.test(ua) ? 'Windows'
            : /CrOS/.test(ua) ? 'ChromeOS'
              : /Linux/.test(ua) ? 'Linux' : '';
  return os ? `${browser} on ${os}` : browser;
}

const reasons = {
  expired: 'Your session ended. Log in again to go on where you were.',
  signedout: 'You are signed out.',
};

export function LoginPage({ query }) {
  usePageTitle('Log in');
  const next = safeNext(query.get('next'));
  const reason = reasons[query.get('reason')];
  const [name, setName] = useState(userName);
  const [password, setPassword] = useState('');
  const [label, setLabel] = useState(() => deviceLabel());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [waitUntil, setWaitUntil] = useState(0);
  const [now, setNow] = useState(Date.now());
  const nameRef = useRef(null);
  const passRef = useRef(null);

  // Already signed in (a valid cookie): go straight on.
  useEffect(() => {
    hub.signedIn().then((yes) => { if (yes) navigate(next, { replace: true }); });
    (name ? passRef : nameRef).current?.focus();
  }, []);

  useEffect(() => {
    if (!waitUntil) return undefined;
    const t = setInterval(() => {
      setNow(Date.now());
      if (Date.now() >= waitUntil) setWaitUntil(0);
    }, 250);
    return () => clearInterval(t);
  }, [waitUntil]);

  const waiting = waitUntil > now ? Math.ceil((waitUntil - now) / 1000) : 0;

  const submit = async (e) => {
    e.preventDefault();
    if (busy || waiting) return;
    setBusy(true);
    setError(null);
    try {
      const res = await hub.login(name.trim(), password, label.trim());
      setSignedIn(res.user);
      setPassword('');
      navigate(next, { replace: true });
    } catch (err) {
      if (err instanceof ApiError && err.status === 429) {
        const secs = err.retryAfter > 0 ? err.retryAfter : 60;
        setWaitUntil(Date.now() + secs * 1000);
        setNow(Date.now());
        setError(new ApiError(429, 'Too many attempts from here.'));
      } else if (err instanceof ApiError && err.status === 401) {
        setError(new ApiError(401, 'That name and password do not match.'));
        passRef.current?.select();
      } else {
        setError(err);
      }
    } finally {
      setBusy(false);
    }
  };

  return html`<main class="login" id="main">
    <form class="card login-card" onSubmit=${submit} aria-describedby="login-help">
      <div class="login-brand"><${Logo} size=${36} /><span>Wharf</span></div>
      <h1 tabindex="-1">Log in to your Hub</h1>
      ${reason ? html`<p class="note note-info" role="status">${reason}</p>` : null}
      <label class="field">
        <span class="field-label">Name</span>
        <input ref=${nameRef} name="username" autocomplete="username" autocapitalize="none" spellcheck=${false}
          required maxlength="64" value=${name} onInput=${(e) => setName(e.currentTarget.value)} />
      </label>
      <label class="field">
        <span class="field-label">Password</span>
        <input ref=${passRef} type="password" name="password" autocomplete="current-password" required
          value=${password} onInput=${(e) => setPassword(e.currentTarget.value)} />
      </label>
      <label class="field">
        <span class="field-label">This device</span>
        <input name="device" maxlength="64" value=${label} onInput=${(e) => setLabel(e.currentTarget.value)}
          aria-describedby="device-help" />
        <span class="field-help" id="device-help">How this login appears in Settings, beside your other devices.</span>
      </label>
      <${ErrorNote} error=${error}>${waiting ? html` Wait ${waiting} s before trying again.` : null}<//>
      <button class="btn btn-primary btn-block" type="submit" disabled=${busy || waiting > 0}>
        ${busy ? 'Logging in…' : waiting ? `Wait ${waiting} s` : 'Log in'}
      </button>
      <p class="field-help" id="login-help">First time? Use the name and password that <code>wharf serve</code> printed
        (or the <code>first-user-password</code> file in its state directory).</p>
    </form>
  </main>`;
}
