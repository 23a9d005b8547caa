// The Settings view: a person's preferences (language, theme, custom
// instructions, default model), their own passkeys (add, name, revoke), sessions
// (list, end one, end all others), personal API tokens (create with an
// expiry, the secret shown once; list; revoke) and the MCP clients they
// authorised (list; revoke). app.mjs loads this module
// when the view is first opened; api is its request helper.
import { h } from './preact.mjs';
import { useState, useEffect } from './preact-hooks.mjs';
import htm from './htm.mjs';
import { register, message, supported } from './passkeys.mjs';
import { languages } from './i18n.mjs';
import { loadPreferences, savePreferences } from './theme.mjs';

const html = htm.bind(h);

const when = (s) => (s ? new Date(s).toLocaleString() : '—');

function useList(api, path) {
  const [list, setList] = useState(null);
  const [err, setErr] = useState('');
  const reload = async () => {
    try { setList(await api('GET', path)); setErr(''); } catch (e) { setErr(e.message); }
  };
  useEffect(() => { reload(); }, []);
  return [list, reload, err];
}

function Passkeys({ api }) {
  const [list, reload, loadErr] = useList(api, '/me/passkeys');
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState('');
  const add = async (e) => {
    e.preventDefault();
    setBusy(true); setErr('');
    try { await register(api, '/me/passkeys/options', undefined, '/me/passkeys', { name: name.trim() }); setName(''); await reload(); }
    catch (ex) { setErr(message(ex)); } finally { setBusy(false); }
  };
  const remove = async (k) => {
    if (!confirm('Revoke the passkey “' + k.name + '”? It will not sign in any more.')) return;
    try { await api('DELETE', '/me/passkeys/' + encodeURIComponent(k.id)); await reload(); } catch (ex) { setErr(ex.message); }
  };
  return html`<section aria-labelledby="set-passkeys" data-section="passkeys">
    <h2 id="set-passkeys">Passkeys</h2>
    ${(loadErr || err) && html`<p class="error" role="alert">${loadErr || err}</p>`}
    ${list && (list.length === 0 ? html`<p class="muted">You have no passkey yet.</p>` : html`<table class="list">
      <thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${list.map((k) => html`<tr data-passkey=${k.name}><td>${k.name}</td><td>${when(k.createdAt)}</td><td>${when(k.lastUsedAt)}</td>
        <td><button type="button" class="danger" onClick=${() => remove(k)} aria-label=${'Revoke passkey ' + k.name}>Revoke</button></td></tr>`)}</tbody>
    </table>`)}
    ${supported() ? html`<form class="inline" onSubmit=${add}>
      <label for="passkey-name">New passkey's name</label>
      <input id="passkey-name" required maxlength="100" value=${name} onInput=${(e) => setName(e.target.value)} placeholder="e.g. Work laptop" />
      <button type="submit" id="passkey-add" disabled=${busy}>${busy ? 'Waiting for the passkey…' : 'Add a passkey'}</button>
    </form>` : html`<p class="muted">This browser cannot use passkeys.</p>`}
  </section>`;
}

function Sessions({ api }) {
  const [list, reload, loadErr] = useList(api, '/me/sessions');
  const [err, setErr] = useState('');
  const end = async (s) => {
    try { await api('DELETE', '/me/sessions/' + encodeURIComponent(s.id)); await reload(); } catch (ex) { setErr(ex.message); }
  };
  const endOthers = async () => {
    try { await api('DELETE', '/me/sessions'); await reload(); } catch (ex) { setErr(ex.message); }
  };
  return html`<section aria-labelledby="set-sessions" data-section="sessions">
    <h2 id="set-sessions">Sessions</h2>
    ${(loadErr || err) && html`<p class="error" role="alert">${loadErr || err}</p>`}
    ${list && html`<table class="list">
      <thead><tr><th scope="col">Signed in with</th><th scope="col">Since</th><th scope="col">Until</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${list.map((s) => html`<tr data-session=${s.id}><td>${s.method}${s.current ? ' (this browser)' : ''}</td><td>${when(s.createdAt)}</td><td>${when(s.expiresAt)}</td>
        <td>${!s.current && html`<button type="button" onClick=${() => end(s)} aria-label=${'End the session since ' + when(s.createdAt)}>End</button>`}</td></tr>`)}</tbody>
    </table>`}
    <button type="button" id="sessions-end-others" onClick=${endOthers}>End all other sessions</button>
  </section>`;
}

function Tokens({ api }) {
  const [list, reload, loadErr] = useList(api, '/me/tokens');
  const [name, setName] = useState('');
  const [days, setDays] = useState('30');
  const [secret, setSecret] = useState('');
  const [err, setErr] = useState('');
  const create = async (e) => {
    e.preventDefault();
    setErr('');
    try {
      const r = await api('POST', '/me/tokens', { name: name.trim(), expiresInDays: parseInt(days, 10) });
      setSecret(r.secret); setName(''); await reload();
    } catch (ex) { setErr(ex.message); }
  };
  const revoke = async (tk) => {
    if (!confirm('Revoke the token “' + tk.name + '”? Programs using it stop at once.')) return;
    try { await api('DELETE', '/me/tokens/' + encodeURIComponent(tk.id)); await reload(); } catch (ex) { setErr(ex.message); }
  };
  const state = (tk) => tk.revokedAt ? 'revoked' : tk.expiresAt && new Date(tk.expiresAt) < new Date() ? 'expired' : 'active';
  return html`<section aria-labelledby="set-tokens" data-section="tokens">
    <h2 id="set-tokens">Personal API tokens</h2>
    ${(loadErr || err) && html`<p class="error" role="alert">${loadErr || err}</p>`}
    ${secret && html`<div class="notice" role="status" id="token-secret">
      <p>Copy the token now: it is not shown again.</p><code>${secret}</code>
      <button type="button" onClick=${() => setSecret('')}>Done</button></div>`}
    ${list && (list.length === 0 ? html`<p class="muted">You have no API token.</p>` : html`<table class="list">
      <thead><tr><th scope="col">Name</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">State</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${list.map((tk) => html`<tr data-token=${tk.name}><td>${tk.name}</td><td>${when(tk.createdAt)}</td><td>${when(tk.expiresAt)}</td><td>${state(tk)}</td>
        <td>${state(tk) === 'active' && html`<button type="button" class="danger" onClick=${() => revoke(tk)} aria-label=${'Revoke token ' + tk.name}>Revoke</button>`}</td></tr>`)}</tbody>
    </table>`)}
    <form class="inline" onSubmit=${create}>
      <label for="token-name">Token name</label>
      <input id="token-name" required maxlength="100" value=${name} onInput=${(e) => setName(e.target.value)} />
      <label for="token-days">Expires in (days)</label>
      <input id="token-days" type="number" min="1" max="366" required value=${days} onInput=${(e) => setDays(e.target.value)} />
      <button type="submit" id="token-create">Create token</button>
    </form>
  </section>`;
}

// MCPClients: the MCP clients (desktop assistants, IDEs) the person
// authorised through the OAuth sign-in, each acting as them in one
// workspace; revoking one stops its tokens at once.
function MCPClients({ api }) {
  const [list, reload, loadErr] = useList(api, '/me/mcp-clients');
  const [spaces] = useList(api, '/workspaces');
  const wsName = (id) => (spaces || []).find((w) => w.id === id)?.name || id;
  const [err, setErr] = useState('');
  const revoke = async (g) => {
    if (!confirm('Revoke “' + g.clientName + '”? It stops at once and must be authorised again.')) return;
    try { await api('DELETE', '/me/mcp-clients/' + encodeURIComponent(g.id)); await reload(); } catch (ex) { setErr(ex.message); }
  };
  const may = (g) => (g.scopes.includes('mcp:write') ? 'all tools your role allows' : 'read-only tools');
  return html`<section aria-labelledby="set-mcp-clients" data-section="mcp-clients">
    <h2 id="set-mcp-clients">MCP clients</h2>
    ${(loadErr || err) && html`<p class="error" role="alert">${loadErr || err}</p>`}
    ${list && (list.length === 0 ? html`<p class="muted">You have authorised no MCP client.</p>` : html`<table class="list">
      <thead><tr><th scope="col">Client</th><th scope="col">Workspace</th><th scope="col">May use</th><th scope="col">Authorised</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${list.map((g) => html`<tr data-mcp-client=${g.clientName}><td title=${g.clientId}>${g.clientName}</td><td>${wsName(g.workspaceId)}</td><td>${may(g)}</td><td>${when(g.createdAt)}</td><td>${when(g.usedAt)}</td>
        <td><button type="button" class="danger" onClick=${() => revoke(g)} aria-label=${'Revoke MCP client ' + g.clientName}>Revoke</button></td></tr>`)}</tbody>
    </table>`)}
  </section>`;
}

// maxInstructions is the server's bound (tenancy.MaxCustomInstructions),
// in bytes of UTF-8.
const maxInstructions = 4000;

// Preferences: saved whole with one button; the theme and language apply
// at once, the instructions and default model from the next conversation.
// The default model is picked from the models the person's workspaces
// allow; a workspace that does not allow it uses its own default.
function Preferences({ api, session, setLang }) {
  const [prefs, setPrefs] = useState(null);
  const [models, setModels] = useState([]);
  const [err, setErr] = useState('');
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    loadPreferences(api).then(setPrefs, (e) => setErr(e.message));
    const wss = ((session && session.workspaces) || []).slice(0, 20);
    Promise.all(wss.map((w) => api('GET', `/workspaces/${encodeURIComponent(w.id)}/models`).then((m) => m.allowed || [], () => [])))
      .then((lists) => {
        const seen = new Map();
        for (const m of lists.flat()) if (!seen.has(m.id)) seen.set(m.id, m);
        setModels([...seen.values()]);
      });
  }, []);
  if (!prefs) return html`<section aria-labelledby="set-prefs" data-section="preferences"><h2 id="set-prefs">Preferences</h2>
    ${err ? html`<p class="error" role="alert">${err}</p>` : html`<p class="muted">Loading…</p>`}</section>`;
  const set = (k) => (e) => { setSaved(false); setPrefs({ ...prefs, [k]: e.target.value }); };
  const bytes = new TextEncoder().encode(prefs.customInstructions || '').length;
  const save = async (e) => {
    e.preventDefault();
    setErr(''); setSaved(false);
    try {
      const kept = await savePreferences(api, prefs);
      setPrefs(kept);
      if (kept.language && languages[kept.language] && setLang) setLang(kept.language);
      setSaved(true);
    } catch (ex) { setErr(ex.message); }
  };
  const known = models.some((m) => m.id === prefs.defaultModel);
  return html`<section aria-labelledby="set-prefs" data-section="preferences">
    <h2 id="set-prefs">Preferences</h2>
    <form class="prefs" onSubmit=${save}>
      <label for="pref-language">Language</label>
      <select id="pref-language" value=${prefs.language || ''} onChange=${set('language')}>
        <option value="">The browser's</option>
        ${Object.entries(languages).map(([k, v]) => html`<option value=${k}>${v}</option>`)}
      </select>
      <fieldset><legend>Theme</legend>
        ${[['system', 'As the system'], ['light', 'Light'], ['dark', 'Dark']].map(([v, l]) => html`<label class="choice">
          <input type="radio" name="pref-theme" id=${'pref-theme-' + v} value=${v} checked=${(prefs.theme || 'system') === v} onChange=${set('theme')} /> ${l}</label>`)}
      </fieldset>
      <label for="pref-instructions">Custom instructions</label>
      <p class="muted" id="pref-instructions-help">Added to every conversation of yours, after the host's own instructions (which they do not replace). ${bytes} of ${maxInstructions} bytes.</p>
      <textarea id="pref-instructions" rows="5" aria-describedby="pref-instructions-help" aria-invalid=${bytes > maxInstructions ? 'true' : 'false'}
        value=${prefs.customInstructions || ''} onInput=${set('customInstructions')}></textarea>
      <label for="pref-model">Default model</label>
      <p class="muted" id="pref-model-help">A new conversation uses it where its workspace allows it; elsewhere the workspace's default answers.</p>
      <select id="pref-model" aria-describedby="pref-model-help" value=${prefs.defaultModel || ''} onChange=${set('defaultModel')}>
        <option value="">The workspace's default</option>
        ${!known && prefs.defaultModel && html`<option value=${prefs.defaultModel}>${prefs.defaultModel} (not offered by your workspaces)</option>`}
        ${models.map((m) => html`<option value=${m.id}>${m.name} (${m.provider})</option>`)}
      </select>
      <div><button type="submit" id="pref-save" disabled=${bytes > maxInstructions}>Save preferences</button>
        ${saved && html` <span role="status" class="ok-note" id="pref-saved">Saved.</span>`}</div>
      ${err && html`<p class="error" role="alert">${err}</p>`}
    </form>
  </section>`;
}

export function Settings({ api, session, setLang }) {
  return html`<main id="main" class="settings" data-view="settings">
    <h1>Settings</h1>
    <${Preferences} api=${api} session=${session} setLang=${setLang} />
    <${Passkeys} api=${api} />
    <${Sessions} api=${api} />
    <${Tokens} api=${api} />
    <${MCPClients} api=${api} />
  </main>`;
}
