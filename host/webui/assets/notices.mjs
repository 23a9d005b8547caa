// The person's notifications (docs/ui.md#notifications): a background job
// or a data source's sync that ended, a tool call that waits for their
// approval. The list and its unread count come from GET /me/notifications
// and then from the server's stream (/me/notifications/events), whose every
// event is the whole page, so a reconnect misses nothing. What is new since
// the page opened is announced in the page (a live region) and, if the
// person allowed it, by the browser's Notification API.
import { h } from './preact.mjs';
import { useState, useEffect, useRef } from './preact-hooks.mjs';
import htm from './htm.mjs';

const html = htm.bind(h);

// The module's own words: loaded with it, not with the first view.
const words = {
  en: {
    notifications: 'Notifications', unread: 'unread', none: 'Nothing to tell yet.', markAllRead: 'Mark all read', markRead: 'Mark read',
    allow: 'Allow browser notifications', blocked: 'The browser blocks notifications for this site.', newNotice: 'New notification',
    backgroundJob_completed: 'Background job “{name}” completed', backgroundJob_failed: 'Background job “{name}” failed',
    backgroundJob_cancelled: 'Background job “{name}” was cancelled', sync_completed: 'Sync of “{name}” completed',
    sync_failed: 'Sync of “{name}” failed', approval_pending: '“{name}” waits for your approval', other: '{name}',
  },
  de: {
    notifications: 'Benachrichtigungen', unread: 'ungelesen', none: 'Noch nichts Neues.', markAllRead: 'Alle als gelesen markieren', markRead: 'Als gelesen markieren',
    allow: 'Browser-Benachrichtigungen erlauben', blocked: 'Der Browser blockiert Benachrichtigungen für diese Seite.', newNotice: 'Neue Benachrichtigung',
    backgroundJob_completed: 'Hintergrundauftrag „{name}“ abgeschlossen', backgroundJob_failed: 'Hintergrundauftrag „{name}“ fehlgeschlagen',
    backgroundJob_cancelled: 'Hintergrundauftrag „{name}“ abgebrochen', sync_completed: 'Synchronisierung von „{name}“ abgeschlossen',
    sync_failed: 'Synchronisierung von „{name}“ fehlgeschlagen', approval_pending: '„{name}“ wartet auf Ihre Freigabe', other: '{name}',
  },
};

// noticeText is a notification in a line, in the person's language.
export function noticeText(w, n) {
  const tpl = w[n.kind + '_' + n.status] || w.other;
  return tpl.replace('{name}', n.name || '');
}

// noticeTarget is where a notification leads: its conversation, or the
// area of its data source.
export function noticeTarget(n) {
  if (!n.workspaceId) return '';
  const ws = '/w/' + encodeURIComponent(n.workspaceId);
  if (n.workflowId) return ws + '/c/' + encodeURIComponent(n.workflowId);
  return n.kind === 'sync' ? ws + '/sources' : ws;
}

// fresh lists the unread notifications of next not in seen (ids), oldest
// first: those to announce.
export function fresh(seen, next) {
  return next.items.filter((n) => !n.readAt && !seen.has(n.id)).reverse();
}

// parseSSE feeds the whole events of an event stream's text to
// onEvent({type, data}) and returns the rest (an event the chunk cut).
export function parseSSE(buf, onEvent) {
  const end = buf.lastIndexOf('\n\n');
  if (end < 0) return buf;
  for (const block of buf.slice(0, end).split('\n\n')) {
    let type = 'message', data;
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const c = line.indexOf(':');
      const k = c < 0 ? line : line.slice(0, c);
      const v = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
      if (k === 'event') type = v;
      else if (k === 'data') data = data === undefined ? v : data + '\n' + v;
    }
    if (data !== undefined) onEvent({ type, data });
  }
  return buf.slice(end + 2);
}

// follow reads the notification stream, again after a drop (each event is
// the whole page: nothing to resume from).
function follow(onPage) {
  const ctl = new AbortController();
  (async () => {
    let backoff = 1000;
    while (!ctl.signal.aborted) {
      try {
        const r = await fetch('/api/v1/me/notifications/events', { credentials: 'same-origin', signal: ctl.signal, headers: { Accept: 'text/event-stream' } });
        if (r.status === 401 || r.status === 404) return;
        if (!r.ok) throw new Error('HTTP ' + r.status);
        backoff = 1000;
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf = parseSSE(buf + value, (e) => {
            if (e.type !== 'notifications') return;
            try { onPage(JSON.parse(e.data)); } catch { /* not a page */ }
          });
        }
      } catch { /* dropped: again below */ }
      if (ctl.signal.aborted) return;
      await new Promise((res) => setTimeout(res, backoff));
      backoff = Math.min(backoff * 2, 30000);
    }
  })();
  return () => ctl.abort();
}

// shared follows the stream from one tab of the browser only (the holder
// of a Web Lock; when it closes, another tab takes over) and hands each
// page to the others over a BroadcastChannel: a browser's connections to
// one server are few under HTTP/1.1 (six in Chromium, shared by its tabs),
// and every open conversation holds one already. A browser without
// either follows in every tab.
function shared(onPage) {
  if (typeof BroadcastChannel === 'undefined' || !navigator.locks) return follow(onPage);
  const ch = new BroadcastChannel('agenthost.notices');
  ch.onmessage = (e) => onPage(e.data);
  const ctl = new AbortController();
  navigator.locks.request('agenthost.notices', { signal: ctl.signal }, () => new Promise((resolve) => {
    if (ctl.signal.aborted) { resolve(); return; }
    const stop = follow((pg) => { onPage(pg); ch.postMessage(pg); });
    ctl.signal.addEventListener('abort', () => { stop(); resolve(); });
  })).catch(() => { /* aborted while waiting */ });
  return () => { ctl.abort(); ch.close(); };
}

export function Notices({ api, lang, go }) {
  const w = words[lang] || words.en;
  const [page, setPage] = useState(null);
  const [open, setOpen] = useState(false);
  const [err, setErr] = useState('');
  const [said, setSaid] = useState('');
  const [perm, setPerm] = useState(() => (typeof Notification === 'undefined' ? 'unsupported' : Notification.permission));
  const seen = useRef(null); // ids shown so far; null until the first page
  const button = useRef();
  const wRef = useRef(w);
  wRef.current = w;
  const take = (pg) => {
    if (seen.current) {
      const news = fresh(seen.current, pg);
      if (news.length) {
        setSaid(news.map((n) => noticeText(wRef.current, n)).join('. '));
        if (typeof Notification !== 'undefined' && Notification.permission === 'granted') {
          for (const n of news) {
            try {
              const note = new Notification(noticeText(wRef.current, n), { body: n.detail || '', tag: n.id });
              note.onclick = () => { focus(); const to = noticeTarget(n); if (to) go(to); };
            } catch { /* a browser that only notifies from a service worker */ }
          }
        }
      }
    }
    seen.current = new Set(pg.items.map((n) => n.id));
    setPage(pg);
  };
  useEffect(() => {
    api('GET', '/me/notifications').then(take, (e) => setErr(e.message));
    return shared(take);
  }, []);
  useEffect(() => {
    if (!open) return;
    const esc = (e) => { if (e.key === 'Escape') { setOpen(false); if (button.current) button.current.focus(); } };
    addEventListener('keydown', esc);
    return () => removeEventListener('keydown', esc);
  }, [open]);
  const mark = async (ids) => {
    try { take(await api('POST', '/me/notifications/read', ids ? { ids } : {})); setErr(''); } catch (e) { setErr(e.message); }
  };
  const allow = async () => {
    try { setPerm(await Notification.requestPermission()); } catch { setPerm(Notification.permission); }
  };
  const unread = page ? page.unread : 0;
  return html`<div class="notices">
    <button type="button" class="notices-button" ref=${button} aria-expanded=${open} aria-controls="notices-panel" onClick=${() => setOpen(!open)}>
      ${w.notifications}${unread > 0 && html`<span class="count" data-testid="notices-unread">${unread}</span><span class="visually-hidden"> ${w.unread}</span>`}
    </button>
    <p class="visually-hidden" role="status" data-testid="notices-live">${said ? w.newNotice + ': ' + said : ''}</p>
    ${open && html`<section id="notices-panel" class="notices-panel" aria-labelledby="notices-h">
      <h2 id="notices-h">${w.notifications}</h2>
      <div class="tools">
        ${unread > 0 && html`<button type="button" data-testid="notices-read-all" onClick=${() => mark(null)}>${w.markAllRead}</button>`}
        ${perm === 'default' && html`<button type="button" data-testid="notices-allow" onClick=${allow}>${w.allow}</button>`}
        ${perm === 'denied' && html`<p class="muted">${w.blocked}</p>`}
      </div>
      ${err && html`<p class="error" role="alert">${err}</p>`}
      ${page && page.items.length === 0 && html`<p class="muted">${w.none}</p>`}
      ${page && page.items.length > 0 && html`<ul>${page.items.map((n) => html`<li key=${n.id} class=${n.readAt ? 'read' : 'unread'}
          data-notice=${n.id} data-kind=${n.kind} data-status=${n.status}>
        <button type="button" class="notice-open" onClick=${() => { if (!n.readAt) mark([n.id]); setOpen(false); const to = noticeTarget(n); if (to) go(to); }}>${noticeText(w, n)}</button>
        ${n.detail && html`<p class="muted">${n.detail}</p>`}
        <p class="muted"><time datetime=${n.createdAt}>${new Date(n.createdAt).toLocaleString(lang)}</time>
          ${!n.readAt && html` <button type="button" class="linkish" onClick=${() => mark([n.id])}>${w.markRead}</button>`}</p>
      </li>`)}</ul>`}
    </section>`}
  </div>`;
}
