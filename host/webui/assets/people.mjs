// The People view (tenant admins): the organisation's people with their
// roles, workspaces, last sign-in and passkeys; make one an admin or not,
// change or remove a workspace role, add one to a workspace, deactivate
// (their sessions and tokens end at once) and reactivate. The server
// scopes all of it to the admin's tenant and refuses what would lock the
// tenant out (the last admin).
import { h } from './preact.mjs';
import { useState, useEffect } from './preact-hooks.mjs';
import htm from './htm.mjs';

const html = htm.bind(h);

const roles = ['manager', 'member', 'personal', 'viewer'];
const when = (s) => (s ? new Date(s).toLocaleString() : 'never');

function Person({ api, p, workspaces, onChange, setErr, self }) {
  const [ws, setWs] = useState('');
  const act = async (method, path, body) => {
    setErr('');
    try { onChange(await api(method, path, body)); } catch (ex) { setErr(p.email + ': ' + ex.message); }
  };
  const base = '/people/' + encodeURIComponent(p.id);
  const others = workspaces.filter((w) => !p.workspaces.some((m) => m.workspaceId === w.id));
  return html`<tr data-person=${p.email} class=${p.deactivatedAt ? 'deactivated' : ''}>
    <th scope="row">${p.name && p.name !== p.email ? html`${p.name}<br/>` : ''}<span class="muted">${p.email}</span>
      ${p.deactivatedAt && html`<br/><strong>deactivated</strong>`}</th>
    <td><label><input type="checkbox" checked=${p.admin} disabled=${self}
      onChange=${(e) => act('PATCH', base, { admin: e.target.checked })} /> admin</label></td>
    <td><ul class="plain">${p.workspaces.map((m) => html`<li data-ws=${m.name}>${m.name}
      <select aria-label=${'Role of ' + p.email + ' in ' + m.name} value=${m.role}
        onChange=${(e) => act('PUT', base + '/workspaces/' + encodeURIComponent(m.workspaceId), { role: e.target.value })}>
        ${roles.map((r) => html`<option value=${r}>${r}</option>`)}</select>
      <button type="button" aria-label=${'Remove ' + p.email + ' from ' + m.name}
        onClick=${() => act('DELETE', base + '/workspaces/' + encodeURIComponent(m.workspaceId))}>Remove</button></li>`)}</ul>
      ${others.length > 0 && html`<select aria-label=${'Add ' + p.email + ' to a workspace'} value=${ws} onChange=${(e) => setWs(e.target.value)}>
        <option value="">Add to…</option>${others.map((w) => html`<option value=${w.id}>${w.name}</option>`)}</select>
        <button type="button" disabled=${!ws} onClick=${() => { act('PUT', base + '/workspaces/' + encodeURIComponent(ws), { role: 'member' }); setWs(''); }}>Add</button>`}</td>
    <td>${when(p.lastSignInAt)}</td>
    <td>${p.passkeys}</td>
    <td>${!self && (p.deactivatedAt
      ? html`<button type="button" onClick=${() => act('PATCH', base, { deactivated: false })}>Reactivate</button>`
      : html`<button type="button" class="danger" onClick=${() => confirm('Deactivate ' + p.email + '? Their sessions and tokens end at once.') && act('PATCH', base, { deactivated: true })}>Deactivate</button>`)}</td>
  </tr>`;
}

// SecondFactorSetting is the organisation's "require a passkey as second
// factor" switch (GET and PUT /api/v1/tenant/second-factor).
function SecondFactorSetting({ api, setErr }) {
  const [on, setOn] = useState(null);
  useEffect(() => { api('GET', '/tenant/second-factor').then((r) => setOn(r.passkeyRequired), (ex) => setErr(ex.message)); }, []);
  if (on === null) return null;
  const toggle = async (e) => {
    const want = e.target.checked;
    try { setOn((await api('PUT', '/tenant/second-factor', { passkeyRequired: want })).passkeyRequired); } catch (ex) { setErr(ex.message); }
  };
  return html`<p class="setting">
    <label><input type="checkbox" id="second-factor-required" checked=${on} onChange=${toggle} />
      Require a passkey as second factor for sign-ins by API token or identity provider</label>
  </p>`;
}

export function People({ api, session }) {
  const [people, setPeople] = useState(null);
  const [err, setErr] = useState('');
  const load = async () => { try { setPeople(await api('GET', '/people')); } catch (ex) { setErr(ex.message); } };
  useEffect(() => { load(); }, []);
  if (!session.user.admin) return html`<main id="main" class="signin"><p>Only the organisation's admins manage people.</p></main>`;
  const changed = (p) => setPeople((list) => list.map((q) => (q.id === p.id ? p : q)));
  return html`<main id="main" class="people" data-view="people">
    <h1>People of ${session.tenant.name}</h1>
    ${err && html`<p class="error" role="alert">${err}</p>`}
    <${SecondFactorSetting} api=${api} setErr=${setErr} />
    ${people && html`<table class="list">
      <thead><tr><th scope="col">Person</th><th scope="col">Admin</th><th scope="col">Workspaces and roles</th>
        <th scope="col">Last sign-in</th><th scope="col">Passkeys</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${people.map((p) => html`<${Person} key=${p.id} api=${api} p=${p} workspaces=${session.workspaces}
        onChange=${changed} setErr=${setErr} self=${p.id === session.user.id} />`)}</tbody>
    </table>`}
  </main>`;
}
