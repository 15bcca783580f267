// What the Clone page works out from a URL before asking the Hub, by
// the Hub's own rules (hub/clone): the folder name a blank one derives
// to, and which transport and host the URL reaches, so that only the
// credentials that fit are offered. The Hub checks everything again;
// these only spare a person a refusal.

/**
 * deriveFolderName is the checkout folder the Hub derives from url when
 * none is given: the URL trimmed, trailing '/' removed, its last part
 * after a '/' or ':', without a trailing ".git"; '' when that leaves
 * nothing usable (the Hub then asks for a folder name).
 */
export function deriveFolderName(url) {
  const s = url.trim().replace(/\/+$/, '');
  let name = s.slice(Math.max(s.lastIndexOf('/'), s.lastIndexOf(':')) + 1);
  if (name.endsWith('.git')) name = name.slice(0, -4);
  if (name === '.' || name === '..' || name.startsWith('.')) return '';
  return name;
}

/**
 * sourceOf says how Git reaches url: {transport: 'ssh'|'https'|'other',
 * host} where host is lower-cased, with an explicit port kept ('' for
 * other). Its reading of URLs is the Hub's: a scheme, an absolute path,
 * or SCP-like `[user@]host:path` (a ':' with no '/' before it).
 */
export function sourceOf(url) {
  const s = url.trim();
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/.exec(s);
  if (m) {
    const scheme = m[1].toLowerCase();
    const transport = scheme === 'https' ? 'https' : scheme === 'ssh' || scheme === 'git+ssh' ? 'ssh' : 'other';
    if (transport === 'other') return { transport, host: '' };
    return { transport, host: hostOf(m[2].slice(m[2].lastIndexOf('@') + 1)) };
  }
  if (!s || s[0] === '/') return { transport: 'other', host: '' };
  const colon = s.indexOf(':');
  const slash = s.indexOf('/');
  if (colon < 0 || (slash >= 0 && slash < colon)) return { transport: 'other', host: '' };
  let host = s.slice(0, colon);
  if (s.startsWith('[') || s.includes('@[')) host = s.slice(s.indexOf('['), s.indexOf(']') + 1);
  return { transport: 'ssh', host: hostOf(host.slice(host.lastIndexOf('@') + 1)) };
}

function hostOf(h) {
  h = h.toLowerCase();
  const port = /:(\d+)$/.exec(h);
  if (port && !h.endsWith(']')) return h.slice(0, -port[0].length).replace(/\.$/, '') + ':' + Number(port[1]);
  return h.replace(/\.$/, '');
}

/**
 * fits reports whether credential c can authenticate a clone from src:
 * an enabled SSH key with ssh-authentication for an SSH URL, an enabled
 * token with https-git made for exactly the URL's host over HTTPS.
 */
export function fits(c, src) {
  if (!c.enabled) return false;
  if (src.transport === 'ssh') return c.type === 'ssh' && c.capabilities.includes('ssh-authentication');
  if (src.transport === 'https') return c.type === 'token' && c.capabilities.includes('https-git') && c.metadata.host === src.host;
  return false;
}

/** canSign reports whether credential c can sign the new workspace's commits. */
export const canSign = (c) => c.enabled && c.capabilities.some((k) => k === 'ssh-signing' || k === 'openpgp-signing');
