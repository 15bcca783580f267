// The destination of a clone, picked with the Add page's folder browser
// (hubBrowse, on the clone's machine) in a dialog: the folders of the one in view, Up, the path
// to type, and "Clone here". Only the folder changes; the form behind it
// keeps what was typed.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { hub } from '../api.js';
import { Dialog, ErrorNote, Icon, Spinner } from '../ui.js';

const join = (parent, name) => (parent === '/' ? '/' + name : parent + '/' + name);

export function FolderPicker({ start, backend, onPick, onClose }) {
  const [path, setPath] = useState(start);
  const [listing, setListing] = useState(null);
  const [error, setError] = useState(null);
  const [typed, setTyped] = useState('');
  useEffect(() => {
    let live = true;
    hub.browse(path, backend).then((res) => { if (live) { setListing(res); setError(null); } }, (e) => { if (live) setError(e); });
    return () => { live = false; };
  }, [path, backend]);
  const go = (e) => {
    e.preventDefault();
    const v = typed.trim();
    if (!v.startsWith('/')) { setError(new Error('Type an absolute path, starting with /.')); return; }
    setTyped('');
    setPath(v);
  };
  const here = listing?.path || path;
  return html`<${Dialog} title="Choose where to clone" onClose=${onClose} labelledBy="pick-title">
    <div class="dialog-body picker">
      <div class="browser-bar">
        ${listing?.parent ? html`<button type="button" class="btn btn-sm btn-quiet" onClick=${() => setPath(listing.parent)}>
          <${Icon} name="up" size=${16} />Up</button>` : null}
        <span class="browser-here" title=${here}>${here}</span>
        ${!listing && !error ? html`<${Spinner} label="Loading folders" />` : null}
      </div>
      <${ErrorNote} error=${error} />
      ${listing ? html`<ul class="dirs picker-dirs" aria-label="Folders">
        ${listing.dirs.length ? null : html`<li class="muted small pad">No folders here.</li>`}
        ${listing.dirs.map((d) => html`<li class="dir" key=${d.name}>
          <button type="button" class="dir-name btn-link" onClick=${() => setPath(join(listing.path, d.name))}>
            <${Icon} name="folder" /><span>${d.name}</span></button>
          ${d.registeredId ? html`<span class="tag tag-ws">${d.displayName}</span>` : null}
        </li>`)}
      </ul>` : null}
      <form class="goto picker-goto" onSubmit=${go}>
        <label class="field field-inline"><span class="sr-only">Go to folder</span>
          <input value=${typed} placeholder="Go to a path" spellcheck=${false} autocapitalize="none"
            onInput=${(e) => setTyped(e.currentTarget.value)} /></label>
        <button class="btn" type="submit">Go</button>
      </form>
    </div>
    <div class="dialog-actions">
      <button type="button" class="btn" onClick=${onClose}>Cancel</button>
      <button type="button" class="btn btn-primary" disabled=${!listing} onClick=${() => { onPick(listing.path); onClose(); }}>
        Clone here</button>
    </div>
  <//>`;
}
