// The workspace UI: sign-in, the workspace switcher, the workspace's areas
// (the chat; files and knowledge, files.mjs; connections and data sources)
// with the conversation list beside each, the chat stream and the right
// panel (preview, tool activity). Everything it shows comes from the HTTP API under the
// signed-in user's scope; a workflow's events arrive over SSE and are
// applied once each, by sequence number, so a reconnect or a reload never
// shows anything twice.
import { h, render } from './preact.mjs';
import { useState, useEffect, useRef, useMemo, useCallback } from './preact-hooks.mjs';
import htm from './htm.mjs';
import { markdown } from './md.mjs';
import { languages, pickLanguage, translator } from './i18n.mjs';
import { loadPreferences, preferences, ready as preferencesReady } from './theme.mjs';
import { newConversation, applyEvent, runLabel, shown, citedPassage } from './conv.mjs';
import { DataSources } from './datasources.mjs';
import { PasskeySignIn, Join, takeInvitation, SecondFactor } from './passkeys.mjs';
import { ProviderButtons, afterSignOut } from './sso.mjs';

const html = htm.bind(h);
const API = '/api/v1';

// ---- the API ----------------------------------------------------------

class Problem extends Error {
  constructor(status, body) {
    super((body && (body.detail || body.title)) || 'HTTP ' + status);
    this.status = status;
  }
}

let csrf = '';

// metrics let the browser tests and benchmarks read what the page did:
// when the first chunk was painted, how long events waited for paint, and
// a way to cut the event stream's connection as a network drop would.
const metrics = (window.__agenthost = { firstChunkPaint: 0, eventLatencies: [], applied: 0 });


async function api(method, path, body) {
  const opts = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (method !== 'GET' && method !== 'HEAD') opts.headers['X-CSRF-Token'] = csrf;
  if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(API + path, opts);
  if (r.status === 204) return null;
  const data = await r.json().catch(() => null);
  // A session that ended (signed out elsewhere, expired, token revoked)
  // sends the page back to the sign-in form instead of failing piecemeal.
  if (r.status === 401 && path !== '/session' && path !== '/setup') dispatchEvent(new Event('agenthost:signedout'));
  if (!r.ok) throw new Problem(r.status, data);
  return data;
}

// upload sends one file with XMLHttpRequest, whose upload progress fetch
// does not report.
function upload(ws, file, tags, folderId, onProgress) {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open('POST', `${API}/workspaces/${encodeURIComponent(ws)}/files`);
    x.setRequestHeader('X-CSRF-Token', csrf);
    x.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    x.onload = () => {
      let data = null;
      try { data = JSON.parse(x.responseText); } catch { /* not JSON */ }
      x.status < 300 ? resolve(data) : reject(new Problem(x.status, data));
    };
    x.onerror = () => reject(new Problem(0, { detail: 'network error' }));
    const fd = new FormData();
    fd.append('file', file, file.name);
    if (tags) fd.append('tags', tags);
    if (folderId) fd.append('folderId', folderId);
    x.send(fd);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// follow reads a workflow's SSE stream with fetch (so it can send
// Last-Event-ID itself, also after a reload) and reconnects after a drop
// from the last sequence number it applied. onEvent sees each event once.
function follow(id, state, onEvent, onConn) {
  const ctl = new AbortController();
  (async () => {
    let backoff = 250;
    while (!ctl.signal.aborted) {
      try {
        // One controller per connection: metrics.dropStream cuts this
        // connection only (as a network drop would), the loop reconnects.
        const conn = new AbortController();
        ctl.signal.addEventListener('abort', () => conn.abort());
        metrics.dropStream = () => conn.abort();
        const r = await fetch(`${API}/workflows/${encodeURIComponent(id)}/events`, {
          credentials: 'same-origin', signal: conn.signal,
          headers: { Accept: 'text/event-stream', 'Last-Event-ID': String(state.lastSeq) },
        });
        if (r.status === 404 || r.status === 401) { onConn(r.status === 404 ? 'notfound' : 'unauthorized'); return; }
        if (!r.ok) throw new Error('HTTP ' + r.status);
        onConn('open');
        backoff = 250;
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '', ev = {};
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let nl;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (line === '') {
              if (ev.data !== undefined) {
                const seq = Number(ev.id);
                if (seq > state.lastSeq) {
                  let data = null;
                  try { data = JSON.parse(ev.data); } catch { data = ev.data; }
                  onEvent({ seq, type: ev.event || 'message', data });
                }
              }
              ev = {};
            } else if (!line.startsWith(':')) {
              const c = line.indexOf(':');
              const k = c < 0 ? line : line.slice(0, c);
              const v = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
              if (k === 'data') ev.data = ev.data === undefined ? v : ev.data + '\n' + v;
              else ev[k] = v;
            }
          }
        }
        throw new Error('stream ended');
      } catch (e) {
        if (ctl.signal.aborted) return;
        onConn('reconnecting');
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  })();
  return () => ctl.abort();
}

// ---- routing ------------------------------------------------------------

function parseRoute(path) {
  if (path === '/connections') return { ws: '', wf: '', view: 'connections' };
  if (path === '/admin' || path.startsWith('/admin/')) return { ws: '', wf: '', view: 'admin' };
  if (path === '/settings' || path === '/people' || path === '/join') return { ws: '', wf: '', view: path.slice(1) };
  // A workspace's areas each have their place: the chat (and a
  // conversation in it), files and knowledge, connections and data sources.
  const m = /^\/w\/([^/]+)(?:\/c\/([^/]+)|\/(files|sources))?\/?$/.exec(path);
  if (m) return { ws: decodeURIComponent(m[1]), wf: m[2] ? decodeURIComponent(m[2]) : '', area: m[3] || 'chat' };
  return { ws: '', wf: '', unknown: path !== '/' };
}

function useRoute() {
  const [route, setRoute] = useState(() => parseRoute(location.pathname));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.pathname));
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  const go = useCallback((path, replace) => {
    if (path === location.pathname) return;
    history[replace ? 'replaceState' : 'pushState'](null, '', path);
    setRoute(parseRoute(path));
  }, []);
  return [route, go];
}


// ---- components ---------------------------------------------------------

function SignIn({ t, onSignedIn, onCancel, fresh, setUp }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState('');
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true); setErr('');
    try {
      const s = await api('POST', '/session', { token: token.trim() });
      onSignedIn(s);
    } catch (ex) { setErr(ex.message); } finally { setBusy(false); }
  };
  return html`<main class="signin" id="main">
    <form onSubmit=${submit} aria-labelledby="signin-title">
      <h1 id="signin-title">${onCancel ? t('addOrg') : t('signInTitle')}</h1>
      <p>${t('signInLead')}</p>
      ${fresh && html`<p class="notice" role="status">${t('setupNeeded')}</p>`}
      ${setUp && html`<p class="notice" role="status">${t('setupAlready')}</p>`}
      ${!onCancel && html`<${ProviderButtons} t=${t} />`}
      <label for="token">${t('token')}</label>
      <input id="token" name="token" type="password" autocomplete="current-password" required value=${token}
        onInput=${(e) => setToken(e.target.value)} aria-describedby=${err ? 'signin-error' : undefined} />
      ${err && html`<p id="signin-error" class="error" role="alert">${err}</p>`}
      <button type="submit" disabled=${busy}>${busy ? t('signingIn') : t('signIn')}</button>
      ${onCancel && html`<button type="button" onClick=${onCancel}>${t('cancel')}</button>`}
    </form>
    <${PasskeySignIn} api=${api} onSignedIn=${onSignedIn} />
  </main>`;
}

// takeSetupLink reads a setup link's secret from the address (#setup=…)
// and takes it out of the address bar and the history.
function takeSetupLink() {
  const m = /^#setup=([A-Za-z0-9_-]+)$/.exec(location.hash);
  if (!m) return '';
  history.replaceState(null, '', location.pathname + location.search);
  return m[1];
}

// Setup creates a fresh server's first organisation and its admin with the
// one-time link the server printed in its log.
function Setup({ t, link, onSignedIn }) {
  const [form, setForm] = useState({ organisation: '', email: '', name: '' });
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState('');
  const [done, setDone] = useState(null);
  const field = (k) => (e) => setForm({ ...form, [k]: e.target.value });
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true); setErr('');
    try { setDone(await api('POST', '/setup', { link, ...form })); } catch (ex) { setErr(ex.message); } finally { setBusy(false); }
  };
  if (done) return html`<main class="signin" id="main" data-view="setup-done">
    <section aria-labelledby="setup-done-title">
      <h1 id="setup-done-title">${t('setupDone')}</h1>
      <p>${t('setupTokenLead')}</p>
      <label for="setup-token">${t('token')}</label>
      <input id="setup-token" readonly value=${done.token} onFocus=${(e) => e.target.select()} />
      <button type="button" onClick=${() => onSignedIn(done)}>${t('setupContinue')}</button>
    </section>
  </main>`;
  return html`<main class="signin" id="main" data-view="setup">
    <form onSubmit=${submit} aria-labelledby="setup-title">
      <h1 id="setup-title">${t('setupTitle')}</h1>
      <p>${t('setupLead')}</p>
      <label for="setup-org">${t('setupOrg')}</label>
      <input id="setup-org" name="organisation" required autocomplete="organization" value=${form.organisation} onInput=${field('organisation')} />
      <label for="setup-email">${t('setupEmail')}</label>
      <input id="setup-email" name="email" type="email" required autocomplete="email" value=${form.email} onInput=${field('email')} />
      <label for="setup-name">${t('setupName')}</label>
      <input id="setup-name" name="name" autocomplete="name" value=${form.name} onInput=${field('name')} />
      ${err && html`<p id="setup-error" class="error" role="alert">${err}</p>`}
      <button type="submit" disabled=${busy}>${busy ? t('setupBusy') : t('setupSubmit')}</button>
    </form>
  </main>`;
}

function NotFound({ t, go }) {
  return html`<main class="notfound" id="main" data-view="notfound">
    <h1>${t('notFound')}</h1><p>${t('notFoundLead')}</p>
    <p><a href="/" onClick=${(e) => { e.preventDefault(); go('/'); }}>${t('backHome')}</a></p>
  </main>`;
}

function Header({ t, session, ws, view, go, lang, setLang, onSignOut, onSwitch, onAdd }) {
  return html`<header class="top">
    <a class="skip" href="#main">${t('chat')}</a>
    <h1 class="brand">agenthost</h1>
    ${session.accounts && session.accounts.length > 1 ? html`<label class="org-switch">${t('tenant')}
      <select id="org" value=${session.accounts[0].sessionId} onChange=${(e) => onSwitch(e.target.value)}>
        ${session.accounts.map((a) => html`<option value=${a.sessionId}>${a.tenant} (${a.email})</option>`)}
      </select></label>` : html`<span class="tenant" title=${t('tenant')}>${session.tenant.name}</span>`}
    <button type="button" class="linkish add-org" onClick=${onAdd}>${t('addOrg')}</button>
    <label class="ws-switch">${t('workspace')}
      <select value=${ws} onChange=${(e) => go('/w/' + encodeURIComponent(e.target.value))}>
        ${!ws && html`<option value="">—</option>`}
        ${session.workspaces.map((w) => html`<option value=${w.id}>${w.name}</option>`)}
      </select>
    </label>
    <label class="lang">${t('language')}
      <select value=${lang} onChange=${(e) => setLang(e.target.value)} id="lang">
        ${Object.entries(languages).map(([k, v]) => html`<option value=${k}>${v}</option>`)}
      </select>
    </label>
    <a href="/connections" class="conn-link" aria-current=${view === 'connections' ? 'page' : undefined}
      onClick=${(e) => { e.preventDefault(); go('/connections'); }}>${t('connections')}</a>
    ${session.user.admin && html`<a href="/people" class="people-link" aria-current=${view === 'people' ? 'page' : undefined}
      onClick=${(e) => { e.preventDefault(); go('/people'); }}>People</a>`}
    ${session.user.admin && html`<a href="/admin" class="admin-link" aria-current=${view === 'admin' ? 'page' : undefined}
      onClick=${(e) => { e.preventDefault(); go('/admin'); }}>Admin</a>`}
    <a href="/settings" class="user" aria-current=${view === 'settings' ? 'page' : undefined}
      onClick=${(e) => { e.preventDefault(); go('/settings'); }}>${session.user.email}</a>
    <a href="/status" class="status-link">${t('serverStatus')}</a>
    <${Notices} key=${session.user.id} t=${t} lang=${lang} go=${go} />
    <button type="button" onClick=${onSignOut}>${t('signOut')}</button>
  </header>`;
}

// Notices is the person's notifications (notices.mjs): loaded a moment
// after the page, whose first view does not need them, and whose first
// load then ends (the module keeps a stream open).
function Notices(props) {
  const [mod, setMod] = useState(null);
  useEffect(() => {
    const timer = setTimeout(() => import('./notices.mjs').then(setMod, () => {}), 3000);
    return () => clearTimeout(timer);
  }, []);
  return mod ? html`<${mod.Notices} api=${api} ...${props} />` : null;
}

// useWide tells whether the window is wider than a phone's (the layout's
// breakpoint in style.css).
function useWide() {
  const q = useMemo(() => matchMedia('(min-width: 901px)'), []);
  const [wide, setWide] = useState(q.matches);
  useEffect(() => { const on = () => setWide(q.matches); q.addEventListener('change', on); return () => q.removeEventListener('change', on); }, []);
  return wide;
}

// AreaNav links the workspace's areas (each its own URL, so reload and back
// work) and opens or closes the conversation list: a side list on a wide
// window (kept open or closed in this browser), a drawer on a phone.
function AreaNav({ t, ws, area, admin, go, listOpen, toggleList }) {
  const link = (a, path, label) => html`<a href=${path} data-area=${a} aria-current=${area === a ? 'page' : undefined}
    onClick=${(e) => { e.preventDefault(); go(path); }}>${label}</a>`;
  const base = '/w/' + encodeURIComponent(ws);
  return html`<nav class="areas" aria-label=${t('areas')}>
    <button type="button" class="conv-toggle" aria-expanded=${listOpen} aria-controls="conv-side" onClick=${toggleList}>${t('conversations')}</button>
    ${link('chat', base, t('chat'))}
    ${link('files', base + '/files', t('areaFiles'))}
    ${link('sources', base + '/sources', t('areaSources'))}
    ${admin && link('admin', '/admin', t('areaAdmin'))}
  </nav>`;
}

function Conversations({ t, ws, wf, list, go, error, reload }) {
  const [q, setQ] = useState('');
  const [archived, setArchived] = useState(false);
  const [sharedOnly, setSharedOnly] = useState(false);
  const [found, setFound] = useState(null);
  const [open, setOpen] = useState('');
  const [renaming, setRenaming] = useState('');
  const [name, setName] = useState('');
  const [confirming, setConfirming] = useState('');
  const [err, setErr] = useState('');
  // A search or the archive is its own listing; the usual list is the
  // workspace's, kept live by the page.
  const own = q.trim() !== '' || archived || sharedOnly;
  const refresh = useCallback(async () => {
    if (!own) { setFound(null); return; }
    try {
      setFound(await api('GET', `/workflows?workspace=${encodeURIComponent(ws)}&limit=100&q=${encodeURIComponent(q.trim())}${archived ? '&archived=true' : ''}${sharedOnly ? '&shared=true' : ''}`));
      setErr('');
    } catch (e) { setErr(e.message); }
  }, [ws, q, archived, sharedOnly]);
  useEffect(() => { const timer = setTimeout(refresh, 250); return () => clearTimeout(timer); }, [refresh]);
  const act = async (fn) => {
    try { await fn(); setErr(''); setOpen(''); setRenaming(''); setConfirming(''); reload(); refresh(); } catch (e) { setErr(e.message); }
  };
  const patch = (id, body) => act(() => api('PATCH', `/workflows/${id}`, body));
  const shown = own ? found : list;
  return html`<section class="panel convs" aria-labelledby="convs-h">
    <h2 id="convs-h">${t('conversations')}</h2>
    <button type="button" class="new" onClick=${() => go('/w/' + encodeURIComponent(ws))}>${t('newConversation')}</button>
    <div class="conv-tools">
      <label class="visually-hidden" for="conv-q">${t('searchConversations')}</label>
      <input id="conv-q" type="search" placeholder=${t('searchConversations')} value=${q} onInput=${(e) => setQ(e.target.value)} />
      <label class="conv-archived"><input type="checkbox" checked=${archived} onChange=${(e) => setArchived(e.target.checked)} /> ${t('archivedOnly')}</label>
      <label class="conv-archived"><input type="checkbox" checked=${sharedOnly} data-testid="shared-with-me" onChange=${(e) => setSharedOnly(e.target.checked)} /> ${t('sharedWithMe')}</label>
    </div>
    ${err && html`<p class="error" role="alert">${err}</p>`}
    ${error ? html`<p class="error" role="alert">${error}</p>` : shown === null ? html`<p class="muted">${t('loading')}</p>` :
      shown.length === 0 ? html`<p class="muted">${t(own ? 'noConversationsFound' : 'noConversations')}</p>` :
      html`<ul class="conv-list">${shown.map((w) => html`<li key=${w.id} data-conv=${w.id} class=${w.pinned ? 'pinned' : ''}>
        ${renaming === w.id ? html`<form class="conv-rename" onSubmit=${(e) => { e.preventDefault(); if (name.trim()) patch(w.id, { name: name.trim() }); }}>
            <label class="visually-hidden" for=${'rename-' + w.id}>${t('name')}</label>
            <input id=${'rename-' + w.id} value=${name} onInput=${(e) => setName(e.target.value)} onKeyDown=${(e) => { if (e.key === 'Escape') { e.preventDefault(); setRenaming(''); } }} />
            <button type="submit">${t('rename')}</button></form>` :
          html`<div class="conv-row"><a href=${`/w/${ws}/c/${w.id}`} aria-current=${w.id === wf ? 'page' : undefined}
           onClick=${(e) => { e.preventDefault(); go(`/w/${encodeURIComponent(ws)}/c/${encodeURIComponent(w.id)}`); }}>
          ${w.pinned && html`<span class="pin">${t('pinned')}</span>`}
          ${w.shared && html`<span class="pin" data-testid="conv-shared">${t('sharedBadge')}</span>`}
          <span class="name">${w.name || w.id.slice(0, 8)}</span>
          <span class=${'badge ' + w.status}>${t(w.status)}</span>
        </a><button type="button" class="linkish conv-more" aria-expanded=${open === w.id} aria-label=${t('actions') + ': ' + (w.name || w.id)}
          onClick=${() => setOpen(open === w.id ? '' : w.id)}>⋯</button></div>`}
        ${open === w.id && renaming !== w.id && sharedOnly && html`<div class="conv-actions" role="group" aria-label=${t('actions')}>
          <button type="button" onClick=${() => exportMarkdown(w).catch((e) => setErr(e.message))}>${t('exportMarkdown')}</button></div>`}
        ${open === w.id && renaming !== w.id && !sharedOnly && html`<div class="conv-actions" role="group" aria-label=${t('actions')}>
          <button type="button" data-testid="conv-share" onClick=${() => patch(w.id, { shared: !w.shared })}>${t(w.shared ? 'unshare' : 'share')}</button>
          <button type="button" onClick=${() => { setRenaming(w.id); setName(w.name || ''); }}>${t('rename')}</button>
          <button type="button" onClick=${() => patch(w.id, { pinned: !w.pinned })}>${t(w.pinned ? 'unpin' : 'pin')}</button>
          <button type="button" onClick=${() => patch(w.id, { archived: !w.archived })}>${t(w.archived ? 'unarchive' : 'archive')}</button>
          <button type="button" onClick=${() => exportMarkdown(w).catch((e) => setErr(e.message))}>${t('exportMarkdown')}</button>
          ${confirming === w.id ? html`<button type="button" class="danger" data-testid="conv-delete-confirm"
              onClick=${() => act(async () => { await api('DELETE', `/workflows/${w.id}`); if (w.id === wf) go('/w/' + encodeURIComponent(ws)); })}>${t('confirmDeleteConversation')}</button>` :
            html`<button type="button" class="danger" onClick=${() => setConfirming(w.id)}>${t('delete')}</button>`}
        </div>`}
      </li>`)}</ul>`}
  </section>`;
}

// exportMarkdown downloads a conversation as Markdown: its name, then each
// of the person's and the agent's messages in order.
async function exportMarkdown(w) {
  const msgs = await api('GET', `/workflows/${w.id}/messages?limit=1000`);
  const items = Array.isArray(msgs) ? msgs : (msgs && msgs.items) || [];
  let md = `# ${w.name || w.id}\n\n`;
  for (const m of items) {
    if (m.role !== 'user' && m.role !== 'assistant') continue;
    md += `## ${m.role === 'user' ? 'You' : 'Agent'}\n\n${m.content}\n\n`;
  }
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([md], { type: 'text/markdown' }));
  a.download = (w.name || 'conversation').replace(/[\\/:*?"<>|]+/g, '_').slice(0, 80) + '.md';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

// encrypted is final too: the file waits for its password (given below).
const finalIndex = (s) => s === 'indexed' || s === 'failed' || s === 'encrypted';
// A paged document (a PDF, a picture) is asked for its progress once it is
// indexed, and again while pages are still extracted or read by OCR.
const paged = (f) => /\.(pdf|png|jpe?g|gif|webp|bmp|tiff?)$/i.test(f.name || '');
const settled = (f) => finalIndex(f.index) && (!paged(f) || f.index === 'failed' || f.index === 'encrypted' || (f.progress !== undefined && !(f.progress && f.progress.pending)));

// FilesArea is the area of files and knowledge (files.mjs, loaded when
// first opened: the chat's first view does not need it).
function FilesArea({ t, ...props }) {
  const [mod, setMod] = useState(null);
  const [err, setErr] = useState('');
  useEffect(() => { import('./files.mjs').then(setMod, (e) => setErr(e.message)); }, []);
  if (err) return html`<p class="error" role="alert">${err}</p>`;
  if (!mod) return html`<p class="muted">${t('loading')}</p>`;
  return html`<${mod.FileBrowser} t=${t} api=${api} upload=${upload} ...${props} />
    <${mod.Search} t=${t} api=${api} ws=${props.ws} openFile=${props.openFile} />`;
}

// Preview shows a file at a place (preview.mjs, loaded when the first
// preview opens; pdf.js only when that is a PDF).
function Preview({ t, target, close }) {
  const [mod, setMod] = useState(null);
  const [err, setErr] = useState('');
  useEffect(() => { if (target && !mod) import('./preview.mjs').then(setMod, (e) => setErr(e.message)); }, [target]);
  if (!target) return null;
  if (err) return html`<p class="error" role="alert">${err}</p>`;
  if (!mod) return html`<p class="muted">${t('loading')}</p>`;
  return html`<${mod.Preview} t=${t} api=${api} target=${target} close=${close} />`;
}

function fmtMs(ms) { return ms >= 1000 ? (ms / 1000).toFixed(1) + ' s' : ms + ' ms'; }

// steps is the run's model steps of their maximum, counted once for the
// header and the activity panel: the server's "round N" label counts the
// conversation's rounds (its prompts), which beside "2 / 25" read as a
// contradiction.
function steps(t, conv) {
  return `${t('rounds')}: ${conv.rounds}${conv.maxRounds ? ' / ' + conv.maxRounds : ''}`;
}

function Activity({ t, conv }) {
  const tools = conv ? conv.tools : [];
  return html`<section class="panel activity" aria-labelledby="act-h">
    <h2 id="act-h">${t('activity')}</h2>
    ${conv && (conv.cost > 0 || conv.tokens > 0) && html`<p class="cost" data-testid="cost">${t('cost')}: CHF ${conv.costCHF} · ${t('tokens')}: ${conv.tokens} · <span data-testid="panel-steps">${steps(t, conv)}</span>${conv.model ? html` · ${t('model')}: <span data-testid="model">${conv.model}</span>` : ''}</p>`}
    ${tools.length === 0 ? html`<p class="muted">${t('noActivity')}</p>` : html`<ol class="tool-log" aria-live="polite">${tools.map((c) => html`<li key=${c.id} class=${c.result ? (c.result.ok ? 'ok' : 'fail') : 'pending'} data-tool=${c.tool}>
      <details>
        <summary><strong>${c.tool}</strong> ${c.result ? html`<span>${c.result.ok ? '✓' : '✗'} ${fmtMs(c.result.durationMs)}</span>` : html`<span class="muted">…</span>`}</summary>
        <h3>${t('arguments')}</h3><pre tabindex="0">${c.args ? JSON.stringify(c.args, null, 1) : ''}</pre>
        ${c.result && html`<h3>${t('result')}</h3><pre tabindex="0">${c.result.ok ? c.result.content : `${c.result.errorCode}: ${c.result.error}`}</pre>`}
        ${c.result && c.result.fitted && c.result.fileId && html`<p class="muted" data-testid="whole-result">${t('resultFitted')} (${c.result.document}):
          <a href=${`${API}/files/${c.result.fileId}/content`} target="_blank" rel="noopener">${t('wholeResult')} (${c.result.bytes} B)</a></p>`}
      </details></li>`)}</ol>`}
  </section>`;
}

function RunState({ t, conv, conn }) {
  if (!conv) return null;
  const parts = [];
  if (conn === 'reconnecting') parts.push(html`<span class="warn" role="status">${t('reconnecting')}</span>`);
  if (conv.status) parts.push(html`<span class=${'badge ' + conv.status} data-testid="run-status" data-status=${conv.status} data-reason=${conv.reason || undefined}>${t(runLabel(conv))}</span>`);
  // The round's number is no news to the reader; what the agent does now
  // (summarising, answering without the knowledge store) is.
  if (conv.status === 'running' && conv.label && !/^round \d+$/.test(conv.label)) parts.push(html`<span class="muted">${conv.label}</span>`);
  if (conv.status === 'running' && conv.rounds > 0) parts.push(html`<span class="muted" data-testid="run-steps">${steps(t, conv)}</span>`);
  if (conv.degraded) parts.push(html`<span class="warn">${t('degraded')}</span>`);
  // A failed round's answer already says why (the loop words the error
  // into it): the error is shown once, there, not again up here.
  if (conv.error && !conv.messages.some((m) => m.role === 'assistant' && m.content.includes(conv.error))) {
    parts.push(html`<span class="error" role="alert">${conv.error}</span>`);
  }
  return html`<div class="run-state">${parts}</div>`;
}

// The message actions (messages.mjs) load with the first conversation
// shown, not with the page: the first view stays within its budget.
let messagesModule = null;
// So does the export (export.mjs), shown above the messages.
let exportModule = null;

// warmPdf loads the preview, pdf.js and its worker (1.8 MB of script to
// compile) once a page of a document is cited, or a pointer is over such a
// citation: a click on it then draws the page without waiting for them. A
// workspace's first view, with no citation, loads none of it.
// The cited page itself is asked for too (prefetchCited): the newest
// answer's first citation of a page, and a citation under the pointer.
let warmed = false;
function warmPdf() {
  if (warmed) return;
  warmed = true;
  import('./preview.mjs').then((m) => m.warm()).catch(() => { warmed = false; });
}
function prefetchCited(file, page) {
  warmPdf();
  import('./preview.mjs').then((m) => m.prefetch(file, Number(page))).catch(() => {});
}
const citesPage = /\]\((?:docItem|file):([A-Za-z0-9-]+)#page=(\d+)\)/;

function Chat({ t, ws, wf, conv, openFile, spoken, send, readOnly }) {
  const end = useRef();
  const [editing, setEditing] = useState('');
  const [mm, setMm] = useState(messagesModule);
  const [em, setEm] = useState(exportModule);
  useEffect(() => {
    if (conv && !mm) import('./messages.mjs').then((m) => { messagesModule = m; setMm(m); }, () => {});
    if (conv && !em) import('./export.mjs').then((m) => { exportModule = m; setEm(m); }, () => {});
  }, [!!conv]);
  useEffect(() => { end.current && !editing && end.current.scrollIntoView({ block: 'end' }); });
  useEffect(() => {
    const last = conv && conv.status !== 'running' && conv.messages.findLast((m) => m.role === 'assistant' && citesPage.test(m.content));
    if (last) { const [, file, page] = citesPage.exec(last.content); prefetchCited(file, page); }
  });
  if (!conv) return html`<div class="chat-empty"><p>${t('emptyChat')}</p></div>`;
  const running = conv.status === 'running';
  // The messages' headings (h3) sit under one of the chat's own: on a
  // phone the conversation list's h2 is in a closed drawer, and h1 to h3
  // is a jump for a screen reader's outline (axe heading-order).
  return html`<h2 class="visually-hidden">${t('chat')}</h2>${em && html`<${em.ExportBar} t=${t} api=${api} ws=${ws} wf=${wf} conv=${conv} />`}<div class="messages" aria-live="polite">
    ${conv.messages.length === 0 && html`<p class="muted">${t('loading')}</p>`}
    ${shown(conv).map((item) => { const m = item.m; return html`<article key=${m.id} class=${'msg ' + m.role + (m.streaming ? ' streaming' : '')} data-message=${m.id}>
      <h3 class="who">${m.role === 'user' ? t('you') : t('assistant')}</h3>
      ${editing === m.id && mm ? html`<${mm.EditPrompt} t=${t} text=${m.content} onCancel=${() => setEditing('')}
          onSend=${(text) => { setEditing(''); send(text, undefined, m.id); }} />` :
        html`<div class="body">${m.role === 'user' ? html`<p>${m.content}</p>` : markdown(m.content, openFile)}</div>`}
      ${editing !== m.id && mm && html`<${mm.MessageActions} t=${t} api=${api} wf=${wf} item=${item} running=${running} readOnly=${readOnly} onEdit=${() => setEditing(m.id)} />`}
      ${spoken && spoken[m.id] && html`<audio controls src=${spoken[m.id]} data-testid="voice-audio" aria-label=${t('voice')}></audio>`}
      ${m.documents && m.documents.length > 0 && html`<ul class="docs">${m.documents.map((d) => html`<li><button type="button" class="cite" onClick=${() => openFile(d.fileId, 0)}>${d.name || d.fileId}</button></li>`)}</ul>`}
    </article>`; })}
    ${conv.files.map((f) => html`<div class="file-card"><button type="button" class="cite" onClick=${() => openFile(f.fileId, 0)}>${f.name}</button> <span class="muted">${f.mimeType}</span></div>`)}
    ${conv.proposals.map((p) => html`<${Proposal} key=${p.id} t=${t} p=${p} openFile=${openFile} readOnly=${readOnly} />`)}
    ${conv.approvals.map((a) => html`<${Approval} key=${a.id} t=${t} wf=${wf} a=${a} readOnly=${readOnly} />`)}
    <div ref=${end}></div>
  </div>`;
}

// Proposal is an edit the agent proposed: its diff and, while it waits,
// accept and reject. Its state is asked of the server too, since a
// rejection leaves no event in the stream.
function Proposal({ t, p, openFile, readOnly }) {
  const [decided, setDecided] = useState('');
  const [err, setErr] = useState('');
  useEffect(() => {
    api('GET', `/proposals/${encodeURIComponent(p.id)}`).then((x) => x && x.status !== 'pending' && setDecided(x.status)).catch(() => {});
  }, [p.id]);
  const status = decided || p.status;
  const decide = async (what) => {
    setErr('');
    try { const d = await api('POST', `/proposals/${encodeURIComponent(p.id)}/${what}`); setDecided(d.proposal.status); } catch (e) { setErr(e.message); }
  };
  const line = (l) => html`<span class=${l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : ''}>${l + '\n'}</span>`;
  return html`<div class="file-card proposal" data-testid="proposal" data-status=${status}>
    <div><strong>${t('proposal')}</strong> <button type="button" class="cite" onClick=${() => openFile(p.fileId, 0)}>${p.name}</button>
      <span class=${'badge ' + status}>${t('proposal_' + status)}</span></div>
    ${p.description && html`<p>${p.description}</p>`}
    <pre class="diff" aria-label=${t('proposal')}>${p.diff.replace(/\n$/, '').split('\n').map(line)}</pre>
    ${status === 'pending' && !readOnly && html`<div class="actions">
      <button type="button" data-testid="proposal-accept" onClick=${() => decide('accept')}>${t('accept')}</button>
      <button type="button" data-testid="proposal-reject" onClick=${() => decide('reject')}>${t('reject')}</button></div>`}
    ${err && html`<p class="error" role="alert">${err}</p>`}
  </div>`;
}

// Approval is a tool call that waits for the person (docs/agent.md#approval-policy):
// the tool, why the model wants it and its arguments, with approve, edit
// (the arguments as JSON, checked against the tool's schema by the server)
// and deny (with a reason the model receives). The decision may come from
// another tab or host: its approvalDecided event updates the card.
function Approval({ t, wf, a, readOnly }) {
  const [decided, setDecided] = useState('');
  const [mode, setMode] = useState(''); // '', 'edit', 'deny'
  const [text, setText] = useState('');
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);
  const status = a.status !== 'pending' ? a.status : decided || 'pending';
  const pretty = (v) => { try { return JSON.stringify(typeof v === 'string' ? JSON.parse(v) : v, null, 2); } catch { return String(v); } };
  const decide = async (body) => {
    setErr(''); setBusy(true);
    try {
      const d = await api('POST', `/workflows/${encodeURIComponent(wf)}/approvals/${encodeURIComponent(a.id)}`, body);
      setDecided(d.state); setMode('');
    } catch (e) { setErr(e.message); }
    setBusy(false);
  };
  const approveEdited = () => {
    let args;
    try { args = JSON.parse(text); } catch { setErr(t('approvalBadJSON')); return; }
    decide({ approve: true, arguments: args });
  };
  return html`<div class="file-card approval" data-testid="approval" data-status=${status} data-tool=${a.tool}>
    <div><strong>${t('approvalTitle')}</strong> <code>${a.tool}</code>
      ${a.external && html` <span class="muted">(${a.external})</span>`}
      <span class=${'badge ' + status} data-testid="approval-status">${t('approval_' + status)}</span></div>
    ${a.reason && html`<p class="approval-reason">${a.reason}</p>`}
    ${mode === 'edit'
      ? html`<label>${t('approvalArgs')}<textarea data-testid="approval-args" rows="6" value=${text} onInput=${(e) => setText(e.target.value)}></textarea></label>`
      : html`<pre class="args" aria-label=${t('approvalArgs')}>${pretty(a.args)}</pre>`}
    ${mode === 'deny' && html`<label>${t('approvalReason')}<input data-testid="approval-reason" value=${text} onInput=${(e) => setText(e.target.value)} /></label>`}
    ${status === 'pending' && !readOnly && html`<div class="actions">
      ${mode === '' && html`
        <button type="button" data-testid="approval-approve" disabled=${busy} onClick=${() => decide({ approve: true })}>${t('approve')}</button>
        <button type="button" data-testid="approval-edit" disabled=${busy} onClick=${() => { setText(pretty(a.args)); setMode('edit'); }}>${t('approvalEdit')}</button>
        <button type="button" data-testid="approval-deny" disabled=${busy} onClick=${() => { setText(''); setMode('deny'); }}>${t('deny')}</button>`}
      ${mode === 'edit' && html`<button type="button" data-testid="approval-approve-edited" disabled=${busy} onClick=${approveEdited}>${t('approveEdited')}</button>`}
      ${mode === 'deny' && html`<button type="button" data-testid="approval-deny-confirm" disabled=${busy} onClick=${() => decide({ approve: false, reason: text })}>${t('deny')}</button>`}
      ${mode !== '' && html`<button type="button" onClick=${() => { setMode(''); setErr(''); }}>${t('cancel')}</button>`}
    </div>`}
    ${a.decisionReason && html`<p class="muted">${a.decisionReason}</p>`}
    ${err && html`<p class="error" role="alert">${err}</p>`}
  </div>`;
}

// useRecorder records the microphone with MediaRecorder; stop() resolves
// with the recording.
function useRecorder() {
  const [rec, setRec] = useState(null);
  const start = async () => {
    const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    const r = new MediaRecorder(stream);
    const parts = [];
    r.ondataavailable = (e) => e.data.size && parts.push(e.data);
    r.done = new Promise((resolve) => { r.onstop = () => { stream.getTracks().forEach((tr) => tr.stop()); resolve(new Blob(parts, { type: r.mimeType || 'audio/webm' })); }; });
    r.start();
    setRec(r);
  };
  const stop = async () => { if (!rec) return null; rec.stop(); const b = await rec.done; setRec(null); return b; };
  return { recording: !!rec, start, stop };
}

// ModelPicker: the conversation's model, from those the workspace allows,
// each with its price (docs/agent.md, "Model choice"). A new conversation
// sends its pick with the first prompt; an existing one keeps it on the
// server (PUT /workflows/:id/model) for its next round.
function ModelPicker({ t, ws, wf, model, setModel, onError }) {
  const [models, setModels] = useState([]);
  useEffect(() => {
    // After the person's preferences: their default model is preselected.
    Promise.all([api('GET', `/workspaces/${encodeURIComponent(ws)}/models`), preferencesReady()])
      .then(([m]) => setModels(m.allowed || []), () => setModels([]));
  }, [ws]);
  useEffect(() => {
    if (!wf) { setModel(''); return; }
    api('GET', `/workflows/${encodeURIComponent(wf)}/model`).then((m) => setModel(m.model || ''), () => {});
  }, [wf]);
  if (models.length < 2) return null;
  const price = (m) => t('modelPrice').replace('{in}', m.inputCHFPer1M).replace('{out}', m.outputCHFPer1M);
  const pick = async (e) => {
    const id = e.target.value;
    setModel(id);
    if (wf) {
      try { await api('PUT', `/workflows/${encodeURIComponent(wf)}/model`, { model: id }); } catch (err) { onError(err.message); }
    }
  };
  return html`<label class="model-picker">${t('model')}${' '}
    <select id="model-picker" value=${model || (models.find((m) => m.id === preferences().defaultModel) || models.find((m) => m.default) || models[0]).id} onChange=${pick}>
      ${models.map((m) => html`<option value=${m.id}>${m.name}${m.default ? ' (' + t('modelDefault') + ')' : ''} · ${price(m)}</option>`)}
    </select></label>`;
}

function Composer({ t, ws, files, running, voice, setVoice, onSend, onStop }) {
  const [text, setText] = useState('');
  const [voiceErr, setVoiceErr] = useState('');
  const [transcribing, setTranscribing] = useState(false);
  const recorder = useRecorder();
  const mic = async () => {
    setVoiceErr('');
    try {
      if (!recorder.recording) { await recorder.start(); return; }
      const audio = await recorder.stop();
      setTranscribing(true);
      const r = await fetch(`${API}/workspaces/${encodeURIComponent(ws)}/voice/transcribe`, { method: 'POST', credentials: 'same-origin',
        headers: { 'Content-Type': audio.type, 'X-CSRF-Token': csrf }, body: audio });
      const data = await r.json().catch(() => null);
      if (!r.ok) throw new Problem(r.status, data);
      const said = (data.text || '').trim();
      if (!said) return;
      // With voice on, what was said is the prompt; otherwise it waits in
      // the input to be read and sent.
      if (voice && !running) onSend(said, []);
      else setText((v) => (v ? v + ' ' : '') + said);
    } catch (e) { setVoiceErr(e.message); } finally { setTranscribing(false); }
  };
  const [attached, setAttached] = useState([]);
  const [sugg, setSugg] = useState(null); // {query, start, items, active}
  const ta = useRef();
  const update = (v, caret) => {
    setText(v);
    const before = v.slice(0, caret);
    const m = /@([^\s@]*)$/.exec(before);
    if (m && files) {
      const q = m[1].toLowerCase();
      const items = files.filter((f) => f.name.toLowerCase().includes(q)).slice(0, 8);
      setSugg(items.length ? { start: caret - m[0].length, end: caret, items, active: 0 } : null);
    } else setSugg(null);
  };
  const choose = (f) => {
    const v = text.slice(0, sugg.start) + '@' + f.name + ' ' + text.slice(sugg.end);
    setText(v);
    if (!attached.some((a) => a.id === f.id)) setAttached([...attached, f]);
    setSugg(null);
    ta.current.focus();
  };
  const send = () => {
    if (!text.trim() || running) return;
    onSend(text, attached.map((a) => a.id));
    setText(''); setAttached([]);
  };
  const key = (e) => {
    if (sugg) {
      if (e.key === 'ArrowDown') { e.preventDefault(); setSugg({ ...sugg, active: (sugg.active + 1) % sugg.items.length }); return; }
      if (e.key === 'ArrowUp') { e.preventDefault(); setSugg({ ...sugg, active: (sugg.active + sugg.items.length - 1) % sugg.items.length }); return; }
      if (e.key === 'Enter' || e.key === 'Tab') { e.preventDefault(); choose(sugg.items[sugg.active]); return; }
      if (e.key === 'Escape') { e.preventDefault(); setSugg(null); return; }
    }
    if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); send(); }
  };
  return html`<form class="composer" onSubmit=${(e) => { e.preventDefault(); send(); }}>
    ${attached.length > 0 && html`<ul class="attached" aria-label=${t('attach')}>${attached.map((a) => html`<li key=${a.id}>${a.name}
      <button type="button" aria-label=${t('remove') + ' ' + a.name} onClick=${() => setAttached(attached.filter((x) => x.id !== a.id))}>×</button></li>`)}</ul>`}
    <div class="input-wrap">
      <label class="visually-hidden" for="chat-input">${t('ask')}</label>
      <textarea id="chat-input" ref=${ta} rows="2" placeholder=${t('ask')} value=${text}
        aria-controls=${sugg ? 'mention-list' : undefined} aria-autocomplete="list"
        aria-activedescendant=${sugg ? 'mention-' + sugg.active : undefined}
        onInput=${(e) => update(e.target.value, e.target.selectionStart)} onKeyDown=${key}></textarea>
      ${sugg && html`<ul id="mention-list" role="listbox" class="mentions">${sugg.items.map((f, i) => html`<li id=${'mention-' + i} role="option"
        aria-selected=${i === sugg.active} class=${i === sugg.active ? 'active' : ''} onMouseDown=${(e) => { e.preventDefault(); choose(f); }}>${f.name}</li>`)}</ul>`}
    </div>
    ${voiceErr && html`<p class="error" role="alert">${voiceErr}</p>`}
    <div class="actions">
      <button type="button" class="voice-toggle" aria-pressed=${voice} onClick=${() => setVoice(!voice)}>${t('voice')}: ${voice ? t('on') : t('off')}</button>
      <button type="button" class=${'mic' + (recorder.recording ? ' recording' : '')} aria-pressed=${recorder.recording} disabled=${transcribing}
        onClick=${mic}>${transcribing ? t('transcribing') : recorder.recording ? t('stopRecording') : t('record')}</button>
      ${running ? html`<button type="button" class="stop" onClick=${onStop}>${t('stop')}</button>` : html`<button type="submit" class="send">${t('send')}</button>`}
    </div>
  </form>`;
}

function Workspace({ t, lang, session, route, go }) {
  const { ws, wf } = route;
  const area = route.area || 'chat';
  // The conversation list: on a wide window a side list the person opens
  // or closes (kept in this browser), on a phone a drawer, closed until
  // asked for and again once a conversation is picked.
  const wide = useWide();
  const [sideOpen, setSideOpen] = useState(() => localStorage.getItem('agenthost.convList') !== 'closed');
  const [drawer, setDrawer] = useState(false);
  const listOpen = wide ? sideOpen : drawer;
  const toggleList = () => {
    if (!wide) { setDrawer(!drawer); return; }
    localStorage.setItem('agenthost.convList', sideOpen ? 'closed' : 'open');
    setSideOpen(!sideOpen);
  };
  useEffect(() => { setDrawer(false); }, [wf, area]);
  const side = useRef();
  useEffect(() => {
    // The drawer takes the focus when it opens and gives it back to its
    // button when Escape closes it.
    if (wide || !drawer || !side.current) return;
    const first = side.current.querySelector('button, a, input');
    if (first) first.focus();
    const esc = (e) => { if (e.key === 'Escape') { setDrawer(false); const b = document.querySelector('.conv-toggle'); if (b) b.focus(); } };
    addEventListener('keydown', esc);
    return () => removeEventListener('keydown', esc);
  }, [drawer, wide]);
  const [convs, setConvs] = useState(null);
  const [convErr, setConvErr] = useState('');
  const [files, setFiles] = useState(null);
  const [folders, setFolders] = useState(null);
  const [fileErr, setFileErr] = useState('');
  const [preview, setPreview] = useState(null);
  const closePreview = useCallback(() => setPreview(null), []);
  const [detail, setDetail] = useState(null);
  const [notFound, setNotFound] = useState(false);
  const [sendErr, setSendErr] = useState('');
  const [model, setModel] = useState(''); // the conversation's chosen model ('' : the default)
  // The open conversation's owner: another member's shared conversation
  // is shown read only.
  const [owner, setOwner] = useState({ id: '', name: '' });
  useEffect(() => {
    setOwner({ id: '', name: '' });
    if (wf) api('GET', `/workflows/${encodeURIComponent(wf)}`).then((w) => setOwner({ id: w.userId || '', name: w.ownerName || '' })).catch(() => {});
  }, [wf]);
  const readOnly = !!owner.id && owner.id !== session.user.id;
  const [conn, setConn] = useState('');
  const [, setTick] = useState(0);
  const convRef = useRef(null);
  // Voice is toggled per conversation (and for the next new one); answers
  // are spoken only when they arrive after a send from this page, never on
  // a replay.
  const voiceKey = 'agenthost.voice.' + (wf || 'new:' + ws);
  const [voice, setVoiceState] = useState(() => localStorage.getItem(voiceKey) === 'on');
  useEffect(() => { setVoiceState(localStorage.getItem(voiceKey) === 'on'); }, [voiceKey]);
  const setVoice = (on) => { localStorage.setItem(voiceKey, on ? 'on' : 'off'); setVoiceState(on); };
  const voiceRef = useRef(voice);
  voiceRef.current = voice;
  const speakFrom = useRef(Infinity);
  const [spoken, setSpoken] = useState({});
  const speak = async (id, text) => {
    try {
      const r = await fetch(`${API}/workspaces/${encodeURIComponent(ws)}/voice/synthesize`, { method: 'POST', credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, body: JSON.stringify({ text: text.slice(0, 4096) }) });
      if (!r.ok) throw new Problem(r.status, await r.json().catch(() => null));
      const url = URL.createObjectURL(await r.blob());
      setSpoken((sp) => ({ ...sp, [id]: url }));
      new Audio(url).play().catch(() => { /* autoplay refused: the player below the message remains */ });
    } catch (e) { setSendErr(e.message); }
  };
  const known = session.workspaces.some((w) => w.id === ws);

  const loadConvs = useCallback(async () => {
    try { setConvs(await api('GET', `/workflows?workspace=${encodeURIComponent(ws)}&limit=100`)); setConvErr(''); } catch (e) { setConvErr(e.message); }
  }, [ws]);
  const loadFiles = useCallback(async () => {
    try {
      const [page, fl] = await Promise.all([api('GET', `/files?workspace=${encodeURIComponent(ws)}&limit=200`), api('GET', `/workspaces/${ws}/folders`)]);
      const prev = {};
      (files || []).forEach((f) => { prev[f.id] = f; });
      setFiles(page.items.map((f) => ({ ...f, index: prev[f.id] && prev[f.id].index, progress: prev[f.id] ? prev[f.id].progress : undefined,
        indexError: prev[f.id] ? prev[f.id].indexError : '', indexNote: prev[f.id] ? prev[f.id].indexNote : '',
        container: /zip|tar|gzip/.test(f.mimeType) })));
      setFolders(fl || []);
      setFileErr('');
    } catch (e) { setFileErr(e.message); }
  }, [ws, files]);

  useEffect(() => { if (known) { setConvs(null); setFiles(null); loadConvs(); loadFiles(); } }, [ws]);
  // A file the agent writes (or a new version of one) is in the files
  // list at once: the conversation's stream says so, and the list is
  // asked again, once for a burst of such events (a replay holds many).
  const loadFilesRef = useRef(loadFiles);
  loadFilesRef.current = loadFiles;
  const filesChanged = useRef(0);
  const fileChanged = () => {
    clearTimeout(filesChanged.current);
    filesChanged.current = setTimeout(() => loadFilesRef.current(), 200);
  };
  useEffect(() => () => clearTimeout(filesChanged.current), []);

  // Index states are live: files not indexed yet are asked again until
  // they are indexed or failed.
  useEffect(() => {
    if (!files) return;
    const open = files.filter((f) => !settled(f));
    if (open.length === 0) return;
    // Background pages (extraction, OCR) take seconds to minutes: asked
    // less often than a file still being indexed.
    const slow = open.every((f) => finalIndex(f.index) && f.progress !== undefined);
    const timer = setTimeout(async () => {
      const states = await Promise.all(open.map((f) => api('GET', `/files/${f.id}/index`).then((s) => ({ index: s.status, progress: s.progress || null, indexError: s.error || '', indexNote: s.note || '' })).catch(() => ({ index: f.index, progress: f.progress === undefined ? null : f.progress }))));
      setFiles((fs) => fs && fs.map((f) => { const i = open.findIndex((o) => o.id === f.id); return i < 0 ? f : { ...f, ...states[i] }; }));
    }, slow ? 3000 : files.some((f) => f.index) ? 700 : 0);
    return () => clearTimeout(timer);
  }, [files]);

  // The open conversation follows its event stream; renders are batched
  // into animation frames, so a burst of chunks costs one paint.
  useEffect(() => {
    convRef.current = null;
    setNotFound(false);
    if (!wf || !known) { setTick((n) => n + 1); return; }
    const c = newConversation();
    convRef.current = c;
    let frame = 0, pending = [], chunkPending = false;
    const paint = () => {
      frame = 0;
      setTick((n) => n + 1);
      requestAnimationFrame(() => {
        const now = performance.now();
        for (const at of pending) metrics.eventLatencies.push(now - at);
        if (chunkPending && metrics.sentAt && !metrics.firstChunkPaint) metrics.firstChunkPaint = now;
        pending = [];
        chunkPending = false;
      });
    };
    const stop = follow(wf, c, (e) => {
      if (!applyEvent(c, e)) return;
      if (e.type === 'message' && e.data.role === 'assistant' && e.seq > speakFrom.current && voiceRef.current) speak(e.data.id, e.data.content);
      metrics.applied++;
      metrics.lastSeq = c.lastSeq;
      pending.push(performance.now());
      if (e.type === 'chunk') chunkPending = true;
      if (e.type === 'complete' || e.type === 'stopped' || e.type === 'error' || e.type === 'renamed') loadConvs();
      if (e.type === 'fileCreated' || e.type === 'fileVersion') fileChanged();
      if (!frame) frame = requestAnimationFrame(paint);
    }, (s) => {
      if (s === 'notfound') setNotFound(true);
      setConn(s);
    });
    api('GET', `/workflows/${encodeURIComponent(wf)}`).then((w) => { if (w.workspaceId !== ws) setNotFound(true); }).catch((e) => { if (e.status === 404) setNotFound(true); });
    return () => { stop(); if (frame) cancelAnimationFrame(frame); };
  }, [wf, ws]);

  if (!known || notFound) return html`<${NotFound} t=${t} go=${go} />`;
  const conv = convRef.current;
  const running = conv && conv.status === 'running';
  // A citation's passage: the search hit's text, or for a citation in an
  // answer the passage the conversation's search found there.
  const openFile = (id, page, passage) => {
    metrics.previewOpenedAt = performance.now();
    setPreview({ id, page, passage: passage || (page ? citedPassage(conv && conv.tools, id, page) : '') });
  };

  // send starts a round: a new prompt, or (editOf) a sent prompt edited,
  // which becomes a new branch beside it.
  const send = async (prompt, fileIds, editOf) => {
    setSendErr('');
    metrics.sentAt = performance.now();
    speakFrom.current = convRef.current ? convRef.current.lastSeq : 0;
    metrics.firstChunkPaint = 0;
    try {
      const w = await api('POST', `/workspaces/${ws}/workflows`, { prompt, fileIds, workflowId: wf || undefined, editOf, userLanguage: lang, model: (!wf && model) || undefined });
      if (!wf) {
        if (voice) localStorage.setItem('agenthost.voice.' + w.id, 'on');
        go(`/w/${encodeURIComponent(ws)}/c/${encodeURIComponent(w.id)}`);
      }
      loadConvs();
    } catch (e) { setSendErr(e.message); }
  };
  const stopRun = async () => {
    try { await api('POST', `/workflows/${wf}/stop`); } catch (e) { setSendErr(e.message); }
  };

  const right = html`<aside class="right" aria-label=${t('activity')}>
      ${detail && html`<${FileDetailPanel} t=${t} ws=${ws} go=${go} id=${detail} folders=${folders} close=${() => setDetail(null)} changed=${loadFiles} openFile=${openFile} />`}
      <${Preview} t=${t} target=${preview} close=${closePreview} />
      ${area === 'chat' && html`<${Activity} t=${t} conv=${conv} />`}
    </aside>`;
  // Outside the chat the right column is there only while it shows a
  // preview or a file's details.
  const hasRight = area === 'chat' || !!detail || !!preview;
  return html`<${AreaNav} t=${t} ws=${ws} area=${area} admin=${session.user.admin} go=${go} listOpen=${listOpen} toggleList=${toggleList} />
  <div class=${'layout area-' + area + (listOpen ? ' list-open' : ' list-closed') + (hasRight ? '' : ' no-right')}>
    <aside class="left" id="conv-side" ref=${side} aria-label=${t('conversations')} hidden=${!listOpen}>
      ${!wide && html`<button type="button" class="linkish drawer-close" onClick=${() => setDrawer(false)}>${t('close')}</button>`}
      <${Conversations} t=${t} ws=${ws} wf=${wf} list=${convs} go=${go} error=${convErr} reload=${loadConvs} />
    </aside>
    ${area === 'files' ? html`<main class="center area-main" id="main" aria-label=${t('areaFiles')} data-area="files">
      <${FilesArea} t=${t} ws=${ws} files=${files} folders=${folders} reload=${loadFiles} openFile=${openFile} openDetail=${setDetail} error=${fileErr} />
    </main>` : area === 'sources' ? html`<main class="center area-main" id="main" aria-label=${t('areaSources')} data-area="sources">
      <${DataSources} t=${t} ws=${ws} api=${api} onSynced=${loadFiles} />
      <${ConnectionsView} t=${t} embedded=${true} />
    </main>` : html`<main class="center" id="main" aria-label=${t('chat')} data-area="chat">
      <${RunState} t=${t} conv=${conv} conn=${conn} />
      <${Chat} t=${t} ws=${ws} wf=${wf} conv=${conv} openFile=${openFile} spoken=${spoken} send=${send} readOnly=${readOnly} />
      ${sendErr && html`<p class="error" role="alert">${sendErr}</p>`}
      ${!readOnly && html`<${ModelPicker} t=${t} ws=${ws} wf=${wf} model=${model} setModel=${setModel} onError=${setSendErr} />`}
      ${readOnly ? html`<p class="muted read-only" data-testid="read-only">${owner.name ? t('sharedReadOnlyBy').replace('{name}', owner.name) : t('sharedReadOnly')}</p>` :
        html`<${Composer} t=${t} ws=${ws} files=${files} running=${running} voice=${voice} setVoice=${setVoice} onSend=${send} onStop=${stopRun} />`}
    </main>`}
    ${hasRight && right}
  </div>`;
}

// ConnectionsView loads the Connections view's module (connections.mjs)
// when it is first opened: most visits never need it.
function ConnectionsView({ t, callback, ...props }) {
  const [mod, setMod] = useState(null);
  const [err, setErr] = useState('');
  useEffect(() => { import('./connections.mjs').then(setMod, (e) => setErr(e.message)); }, []);
  const notice = useMemo(() => mod && callback ? mod.callbackNotice(callback) : null, [mod, callback]);
  if (props.embedded && (err || !mod)) return err ? html`<p class="error" role="alert">${err}</p>` : html`<p class="muted">${t('loading')}</p>`;
  if (err) return html`<main class="signin" id="main"><p class="error" role="alert">${err}</p></main>`;
  if (!mod) return html`<main class="signin" id="main"><p class="muted">${t('loading')}</p></main>`;
  return html`<${mod.Connections} t=${t} api=${api} notice=${notice} ...${props} />`;
}

// FileDetailPanel shows a file's details (filedetail.mjs, loaded when
// first opened: the list does not need it).
function FileDetailPanel({ t, ...props }) {
  const [mod, setMod] = useState(null);
  const [err, setErr] = useState('');
  useEffect(() => { import('./filedetail.mjs').then(setMod, (e) => setErr(e.message)); }, []);
  if (err) return html`<p class="error" role="alert">${err}</p>`;
  if (!mod) return html`<p class="muted">${t('loading')}</p>`;
  return html`<${mod.FileDetail} t=${t} api=${api} ...${props} />`;
}

// Lazy shows a view of a module loaded when first opened (settings.mjs,
// people.mjs).
function Lazy({ t, load, name, ...props }) {
  const [mod, setMod] = useState(null);
  const [err, setErr] = useState('');
  useEffect(() => { load().then(setMod, (e) => setErr(e.message)); }, []);
  if (err) return html`<main class="signin" id="main"><p class="error" role="alert">${err}</p></main>`;
  if (!mod) return html`<main class="signin" id="main"><p class="muted">${t('loading')}</p></main>`;
  const View = mod[name];
  return html`<${View} api=${api} ...${props} />`;
}

// takeCallback keeps the query the server's OAuth callback sent the
// browser back with (?connection=ok|error&reason=…, on any of the page's
// paths, which take no query of their own) and moves to the Connections
// view without it in the URL, so a reload does not show it again.
function takeCallback() {
  if (!new URLSearchParams(location.search).has('connection')) return '';
  const q = location.search;
  history.replaceState(null, '', '/connections' + location.hash);
  return q;
}

function App() {
  const [lang, setLangState] = useState(pickLanguage);
  const t = useMemo(() => translator(lang), [lang]);
  const setLang = (l) => { localStorage.setItem('agenthost.lang', l); setLangState(l); };
  // Set while rendering, so the page's language and its words change together.
  document.documentElement.lang = lang;
  const [session, setSession] = useState(undefined); // undefined: loading; null: signed out
  const [err, setErr] = useState('');
  // Before useRoute: the callback's outcome moves the page to /connections.
  const [callback, setCallback] = useState(takeCallback);
  const [route, go] = useRoute();
  const [adding, setAdding] = useState(false);
  const [setupLink, setSetupLink] = useState(takeSetupLink);
  const [fresh, setFresh] = useState(false); // the server has no organisation yet
  const [invitation] = useState(takeInvitation);
  // pending: the session waits for its second factor (a passkey); its
  // state is GET /session/second-factor's answer.
  const [pending, setPending] = useState(null);
  const toPending = async () => {
    try { const st = await api('GET', '/session/second-factor'); csrf = st.csrf; setPending(st); return true; } catch { return false; }
  };
  const load = async () => {
    setErr('');
    try {
      const s = await api('GET', '/session'); csrf = s.csrf; setSession(s);
      // The person's preferences: the theme (this browser's copy already
      // applied) and the language they chose, if any.
      loadPreferences(api).then((p) => { if (p.language && languages[p.language] && p.language !== lang) setLang(p.language); }, () => {});
    } catch (e) {
      if (e.status !== 401) { setErr(e.message); return; }
      if (await toPending()) { setSession(null); return; }
      try { setFresh((await api('GET', '/setup')).needed); } catch { setFresh(false); }
      setSession(null);
    }
  };
  useEffect(() => {
    // A link pasted into the address bar of the open page changes only
    // the fragment: no reload, so the page takes it from the event.
    const onHash = () => { const l = takeSetupLink(); if (l) setSetupLink(l); };
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    load();
    const out = () => { csrf = ''; setSession(null); };
    addEventListener('agenthost:signedout', out);
    return () => removeEventListener('agenthost:signedout', out);
  }, []);
  useEffect(() => {
    if (session && !route.ws && !route.unknown && !route.view && session.workspaces.length > 0) go('/w/' + encodeURIComponent(session.workspaces[0].id), true);
  }, [session, route.ws, route.view]);
  if (err) return html`<main class="signin" id="main"><p class="error" role="alert">${t('error')}: ${err}</p><button type="button" onClick=${load}>${t('retry')}</button></main>`;
  if (session === undefined) return html`<main class="signin" id="main"><p class="muted">${t('loading')}</p></main>`;
  if (pending) {
    return html`<${SecondFactor} api=${api} state=${pending}
      onDone=${(s) => { csrf = s.csrf; setPending(null); setAdding(false); setSession(s); go('/'); }}
      onCancel=${() => { csrf = ''; setPending(null); load(); }} />`;
  }
  if (session === null && setupLink && fresh) {
    return html`<${Setup} t=${t} link=${setupLink} onSignedIn=${(s) => { csrf = s.csrf; setSetupLink(''); setFresh(false); setSession(s); }} />`;
  }
  if (session === null && route.view === 'join') return html`<${Join} api=${api} secret=${invitation} onSignedIn=${(s) => { csrf = s.csrf; setSession(s); go('/'); }} />`;
  if (session === null) return html`<${SignIn} t=${t} fresh=${fresh} setUp=${!!setupLink && !fresh} onSignedIn=${(s) => { csrf = s.csrf; setSetupLink(''); if (s.secondFactor) toPending(); else setSession(s); }} />`;
  // Another organisation: sign in with its token; the session so far is
  // kept, and the switcher moves between them.
  const signedIn = (s) => { csrf = s.csrf; if (s.secondFactor) { toPending(); return; } setAdding(false); setSession(s); go('/'); };
  if (adding) return html`<${SignIn} t=${t} onSignedIn=${signedIn} onCancel=${() => setAdding(false)} />`;
  const switchTo = async (id) => {
    try { signedIn(await api('POST', '/session/switch', { sessionId: id })); } catch (e) { setErr(e.message); }
  };
  const signOut = async () => {
    let answer = null;
    try { answer = await api('DELETE', '/session'); } finally { csrf = ''; if (!afterSignOut(answer)) { setSession(null); go('/'); } }
  };
  return html`<div class="app">
    <${Header} t=${t} session=${session} ws=${route.ws} view=${route.view} go=${go} lang=${lang} setLang=${setLang} onSignOut=${signOut}
      onSwitch=${switchTo} onAdd=${() => setAdding(true)} />
    ${route.view === 'connections' ? html`<${ConnectionsView} t=${t} callback=${callback} dismiss=${() => setCallback('')} back=${() => go('/')} />` :
      route.view === 'settings' ? html`<${Lazy} key="settings" t=${t} load=${() => import('./settings.mjs')} name="Settings" session=${session} setLang=${setLang} />` :
      route.view === 'people' ? html`<${Lazy} key="people" t=${t} load=${() => import('./people.mjs')} name="People" session=${session} />` :
      route.view === 'admin' ? html`<${Lazy} key="admin" t=${t} load=${() => import('./admin.mjs')} name="Admin" session=${session} go=${go} />` :
      route.unknown ? html`<${NotFound} t=${t} go=${go} />` :
      session.workspaces.length === 0 ? html`<main id="main" class="signin"><p>${t('noWorkspaces')}</p></main>` :
      route.ws ? html`<${Workspace} key=${route.ws} t=${t} lang=${lang} session=${session} route=${route} go=${go} />` : null}
  </div>`;
}

// A pointer over (or the focus on) a citation of a page starts loading
// the preview and pdf.js, which the click then finds loaded or on its way.
const warmPreview = (e) => {
  const cite = e.target instanceof Element && e.target.closest('button.cite[data-page]');
  if (cite) prefetchCited(cite.dataset.file, cite.dataset.page);
};
addEventListener('pointerover', warmPreview); addEventListener('focusin', warmPreview);

render(html`<${App} />`, document.getElementById('app'));
