// The Settings view: a person's own passkeys (add, name, revoke), sessions
// (list, end one, end all others) and personal API tokens (create with an
// expiry, the secret shown once; list; revoke). app.mjs loads this module
// when the view is first opened; api is its request helper.
import { h } from './preact.mjs';
import { useState, useEffect } from './preact-hooks.mjs';
import htm from './htm.mjs';
import { register, message, supported } from './passkeys.mjs';

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

export function Settings({ api }) {
  return html`<main id="main" class="settings" data-view="settings">
    <h1>Settings</h1>
    <${Passkeys} api=${api} />
    <${Sessions} api=${api} />
    <${Tokens} api=${api} />
  </main>`;
}
