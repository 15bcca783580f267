// What this browser remembers of its login, outside the HttpOnly cookie
// it cannot read: whether it signed in (so a 401 can say "your session
// ended" rather than greet a stranger) and the user's name.

export function setSignedIn(user) {
  localStorage.setItem('wharf.signedIn', '1');
  if (user) localStorage.setItem('wharf.user', user);
}

export function clearSignedIn() { localStorage.removeItem('wharf.signedIn'); }

export function wasSignedIn() { return localStorage.getItem('wharf.signedIn') === '1'; }

export function userName() { return localStorage.getItem('wharf.user') || ''; }
