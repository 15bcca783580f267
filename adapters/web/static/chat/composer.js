// The composer: a message's text and images (picked, pasted or dropped),
// sent with workspaceSendMessage; while a turn runs, what is sent is
// held and delivered in order, and the held queue shows above it with a
// way to take each message back. "Stop" cancels the running turn. Every
// send carries a requestId, and a send the Hub did not answer is tried
// again with the same one, so it is delivered once. A refusal (too many
// held messages, an image that is not one) shows here, in words, and the
// message stays in the composer.
import { useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { ApiError, chat } from '../api.js';
import { announce } from '../announce.js';
import { ErrorNote, Icon, useAction } from '../ui.js';
import { size } from './items.js';

/** The limits of workspaceSendMessage the page checks before uploading. */
export const MAX_IMAGES = 8;
export const MAX_IMAGE_BYTES = 10 << 20;
const ACCEPT = 'image/png,image/jpeg,image/gif,image/webp';

/** newRequestId is 128 random bits in hex (crypto.randomUUID needs a secure context). */
function newRequestId() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

/** readImage reads a file as {name, mimeType, size, data (base64), url (a data: URL to preview)}. */
function readImage(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => {
      const url = String(r.result);
      resolve({ key: newRequestId(), name: file.name || 'pasted image', mimeType: file.type, size: file.size, url, data: url.slice(url.indexOf(',') + 1) });
    };
    r.onerror = () => reject(new Error(`${file.name || 'The image'} could not be read.`));
    r.readAsDataURL(file);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const retriable = (e) => e instanceof ApiError && (e.status === 0 || e.status === 502 || e.status === 503 || e.status === 504);

/** send delivers a message, trying again (with its requestId) when the Hub did not answer. */
async function send(ws, cid, message) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await chat.send(ws, cid, message);
    } catch (e) {
      if (!retriable(e) || attempt >= 3) throw e;
      await sleep(1000 * attempt);
    }
  }
}

export function Composer({ ws, cid, running, queued }) {
  const [text, setText] = useState('');
  const [images, setImages] = useState([]);
  const [problem, setProblem] = useState('');
  const action = useAction();
  const stop = useAction();
  const files = useRef(null);
  const area = useRef(null);

  const add = async (list) => {
    setProblem('');
    const next = [...images];
    for (const f of list) {
      if (!f.type.startsWith('image/')) { setProblem(`${f.name} is not an image: attach PNG, JPEG, GIF or WebP images.`); continue; }
      if (f.size > MAX_IMAGE_BYTES) { setProblem(`${f.name} is ${size(f.size)}: an image may be at most 10 MiB.`); continue; }
      if (next.length >= MAX_IMAGES) { setProblem(`At most ${MAX_IMAGES} images per message.`); break; }
      try { next.push(await readImage(f)); } catch (e) { setProblem(e.message); }
    }
    setImages(next);
  };
  const pick = (e) => {
    add([...e.currentTarget.files]);
    e.currentTarget.value = '';
  };
  const paste = (e) => {
    const imgs = [...(e.clipboardData?.files || [])].filter((f) => f.type.startsWith('image/'));
    if (!imgs.length) return;
    if (!e.clipboardData.types.includes('text/plain')) e.preventDefault();
    add(imgs);
  };
  const drop = (e) => {
    const list = [...(e.dataTransfer?.files || [])];
    if (!list.length) return;
    e.preventDefault();
    add(list);
  };

  const empty = !text.trim() && !images.length;
  const submit = (e) => {
    e?.preventDefault();
    if (empty || action.busy) return;
    setProblem('');
    action.run(async () => {
      const message = { requestId: newRequestId() };
      if (text.trim()) message.text = text;
      if (images.length) message.attachments = images.map((i) => ({ mimeType: i.mimeType, data: i.data, name: i.name }));
      const res = await send(ws, cid, message);
      setText('');
      setImages([]);
      announce(res.held ? 'Held until the agent finishes its turn' : 'Sent');
      area.current?.focus();
    });
  };
  const key = (e) => {
    // Enter sends from a keyboard; Shift+Enter is a new line. On touch
    // screens Enter is a new line, and the button sends.
    if (e.key === 'Enter' && !e.shiftKey && !e.altKey && !e.isComposing && !matchMedia('(pointer: coarse)').matches) {
      e.preventDefault();
      submit();
    }
  };
  const cancel = () => stop.run(async () => {
    await chat.cancel(ws, cid);
    announce('Stopping the turn');
  });

  return html`<div class="composer-wrap">
    <${Held} ws=${ws} cid=${cid} queued=${queued} />
    <form class="composer" onSubmit=${submit} onDragOver=${(e) => e.preventDefault()} onDrop=${drop} aria-label="Message">
      ${images.length ? html`<ul class="thumbs" aria-label="Images to send">${images.map((im) => html`<li key=${im.key} class="thumb">
        <img src=${im.url} alt="" />
        <span class="thumb-name">${im.name}</span>
        <button type="button" class="thumb-x" aria-label=${`Remove ${im.name}`}
          onClick=${() => setImages(images.filter((x) => x !== im))}><${Icon} name="x" size=${14} /></button>
      </li>`)}</ul>` : null}
      <label class="sr-only" for="composer-text">Message to the agent</label>
      <textarea id="composer-text" ref=${area} rows="1" value=${text} placeholder=${running ? 'Add a message: it waits for this turn' : 'Message the agent'}
        onInput=${(e) => setText(e.currentTarget.value)} onKeyDown=${key} onPaste=${paste}></textarea>
      <div class="composer-bar">
        <input ref=${files} type="file" accept=${ACCEPT} multiple hidden onChange=${pick} />
        <button type="button" class="btn btn-sm btn-quiet" onClick=${() => files.current.click()} aria-label="Attach images"
          title="Attach images (or paste them)"><${Icon} name="image" size=${18} /><span class="hide-sm">Image</span></button>
        <span class="composer-end">
          ${running ? html`<button type="button" class="btn btn-sm" disabled=${stop.busy} onClick=${cancel}>
            <${Icon} name="stop" size=${16} />${stop.busy ? 'Stopping…' : 'Stop'}</button>` : null}
          <button type="submit" class="btn btn-sm btn-primary" disabled=${empty || action.busy}>
            <${Icon} name="send" size=${16} />${action.busy ? 'Sending…' : running ? 'Hold' : 'Send'}</button>
        </span>
      </div>
      ${problem ? html`<p class="note note-error" role="alert">${problem}</p>` : null}
      <${ErrorNote} error=${action.error || stop.error} />
    </form>
  </div>`;
}

/** Held is the held queue: messages waiting for the running turn, each removable. */
function Held({ ws, cid, queued }) {
  const action = useAction();
  if (!queued || !queued.length) return null;
  const remove = (q) => action.run(async () => {
    await chat.removeHeld(ws, cid, q.id);
    announce('Held message removed');
  });
  return html`<section class="held" aria-labelledby="held-title">
    <h2 id="held-title" class="held-title">Held until the agent finishes <span class="count">${queued.length}</span></h2>
    <ol class="held-list">${queued.map((q) => html`<li key=${q.id} data-held=${q.id}>
      <span class="held-text">${q.text || ''}${q.attachments?.length ? html` <span class="tag">${q.attachments.length} image${q.attachments.length > 1 ? 's' : ''}</span>` : null}</span>
      <button type="button" class="btn btn-sm btn-quiet" disabled=${action.busy} onClick=${() => remove(q)}
        aria-label=${`Remove held message ${q.text ? q.text.slice(0, 40) : ''}`.trim()}>Remove</button>
    </li>`)}</ol>
    <${ErrorNote} error=${action.error} />
  </section>`;
}
