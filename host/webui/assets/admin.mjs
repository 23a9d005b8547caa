// The admin console (tenant admins): what otherwise needs the command line,
// each view over the existing API routes — workspaces and their members
// (/people), the workspaces' tool sets (/workspaces/:ws/tools), plugins with
// their grants and the plugin audit (/plugins, /plugins/audit), external MCP
// servers and connection providers (/mcp-servers, /connections/providers),
// spending limits and usage (/billing/budget, /billing/usage), background
// jobs (/background) and the audit log (/audit, /audit/export). The server
// refuses all of it to anyone else; the view only spares them the errors.
import { h } from './preact.mjs';
import { useState, useEffect } from './preact-hooks.mjs';
import htm from './htm.mjs';

const html = htm.bind(h);
const API = '/api/v1';
const when = (s) => (s ? new Date(s).toLocaleString() : '—');
const chf = (n) => 'CHF ' + Number(n || 0).toFixed(2);

// useLoad fetches once per key and keeps the error to show, not throw.
function useLoad(api, path) {
  const [state, setState] = useState({ data: null, err: '' });
  useEffect(() => {
    let live = true;
    setState({ data: null, err: '' });
    api('GET', path).then((data) => live && setState({ data, err: '' }), (ex) => live && setState({ data: null, err: ex.message }));
    return () => { live = false; };
  }, [path]);
  return state;
}

function Loaded({ state, children }) {
  if (state.err) return html`<p class="error" role="alert">${state.err}</p>`;
  if (!state.data) return html`<p class="muted">Loading…</p>`;
  return children(state.data);
}

function Workspaces({ api, session, go }) {
  const people = useLoad(api, '/people');
  return html`<${Loaded} state=${people}>${(list) => html`<table class="list" data-table="workspaces">
    <caption class="sr-only">Workspaces and their members</caption>
    <thead><tr><th scope="col">Workspace</th><th scope="col">Kind</th><th scope="col">Members and roles</th></tr></thead>
    <tbody>${session.workspaces.map((w) => {
      const members = list.flatMap((p) => p.workspaces.filter((m) => m.workspaceId === w.id).map((m) => ({ p, role: m.role })));
      return html`<tr data-ws=${w.name}><th scope="row">${w.name}</th><td>${w.kind || '—'}</td>
        <td><ul class="plain">${members.map(({ p, role }) => html`<li>${p.email} — ${role}</li>`)}</ul>
        <a href="/people" onClick=${(e) => { e.preventDefault(); go('/people'); }}>Manage in People</a></td></tr>`;
    })}</tbody></table>`}<//>`;
}

// availability is a tool's state in a set: an MCP server's tool whose
// server is down stays listed, with why and since when.
const availability = (t) => (t.unavailable
  ? 'no: ' + t.unavailable + (t.unavailableSince ? ' (since ' + new Date(t.unavailableSince).toLocaleString() + ')' : '')
  : 'yes');

function ToolSet({ api, w }) {
  const tools = useLoad(api, '/workspaces/' + encodeURIComponent(w.id) + '/tools');
  return html`<section aria-labelledby=${'ts-' + w.id}><h3 id=${'ts-' + w.id}>${w.name}</h3>
    <${Loaded} state=${tools}>${(list) => html`<table class="list" data-toolset=${w.name}>
      <thead><tr><th scope="col">Tool</th><th scope="col">Plugin</th><th scope="col">Read-only</th><th scope="col">Available</th></tr></thead>
      <tbody>${list.map((t) => html`<tr data-unavailable=${t.unavailable ? 'true' : null}><th scope="row">${t.name}</th><td>${t.plugin || '—'}</td>
        <td>${t.readOnly ? 'yes' : 'no'}</td><td>${availability(t)}</td></tr>`)}</tbody>
    </table>`}<//></section>`;
}

function ToolSets({ api, session }) {
  return html`<div>${session.workspaces.map((w) => html`<${ToolSet} key=${w.id} api=${api} w=${w} />`)}</div>`;
}

// grantText renders a plugin's assessment (capabilities, mounts, ceilings)
// as short lines; its shape is the host's, so it is shown key by key.
const grantText = (g) => (g && typeof g === 'object'
  ? Object.entries(g).filter(([, v]) => v !== null && v !== '' && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => k + ': ' + (typeof v === 'object' ? JSON.stringify(v) : String(v)))
  : []);

function Plugins({ api }) {
  const plugins = useLoad(api, '/plugins');
  const audit = useLoad(api, '/plugins/audit');
  return html`<div>
    <${Loaded} state=${plugins}>${(list) => html`<table class="list" data-table="plugins">
      <caption class="sr-only">Installed plugins</caption>
      <thead><tr><th scope="col">Plugin</th><th scope="col">Version</th><th scope="col">Signature (SHA-256)</th><th scope="col">Grant</th></tr></thead>
      <tbody>${list.map((p) => html`<tr data-plugin=${p.name}><th scope="row">${p.name}${p.builtin ? html` <span class="muted">(built in)</span>` : ''}${p.kept ? html` <span class="muted">(kept)</span>` : ''}</th>
        <td>${p.version}</td><td><code>${(p.sha256 || '').slice(0, 16)}</code></td>
        <td><details><summary>${(p.capabilities || []).join(', ') || 'no capabilities'}</summary>
          <ul class="plain">${grantText(p.grant).map((l) => html`<li><code>${l}</code></li>`)}</ul></details></td></tr>`)}</tbody>
    </table>`}<//>
    <h3>Plugin audit</h3>
    ${audit.err ? html`<p class="muted">${audit.err}</p>` : html`<${Loaded} state=${audit}>${(recs) => (recs.length === 0
      ? html`<p class="muted">No installs or upgrades recorded.</p>`
      : html`<table class="list" data-table="plugin-audit">
        <thead><tr><th scope="col">When</th><th scope="col">Plugin</th><th scope="col">Action</th><th scope="col">Version</th><th scope="col">What changed</th></tr></thead>
        <tbody>${recs.map((r) => html`<tr data-audit-plugin=${r.plugin}><td>${when(r.at)}</td><th scope="row">${r.plugin}</th><td>${r.action}${r.allowedBy ? ' (' + r.allowedBy + ')' : ''}</td>
          <td>${r.fromVersion || '—'} → ${r.toVersion || '—'}</td>
          <td><ul class="plain">${(r.changes || []).map((c) => html`<li>${c.what}: ${c.from || '—'} → ${c.to || '—'}${c.widens ? html` <strong>widens</strong>` : ''}</li>`)}</ul></td></tr>`)}</tbody></table>`)}<//>`}
  </div>`;
}

function MCP({ api }) {
  const servers = useLoad(api, '/mcp-servers');
  const providers = useLoad(api, '/connections/providers');
  return html`<div>
    <h3>External MCP servers</h3>
    <${Loaded} state=${servers}>${(list) => (list.length === 0 ? html`<p class="muted">None.</p>` : html`<table class="list" data-table="mcp">
      <thead><tr><th scope="col">Name</th><th scope="col">Transport</th><th scope="col">Address</th><th scope="col">Workspace</th><th scope="col">Added</th></tr></thead>
      <tbody>${list.map((s) => html`<tr data-mcp=${s.name}><th scope="row">${s.name}</th><td>${s.config?.transport}</td>
        <td><code>${s.config?.url || (s.config?.command || []).join(' ')}</code></td><td>${s.workspaceId || 'all'}</td><td>${when(s.createdAt)}</td></tr>`)}</tbody>
    </table>`)}<//>
    <h3>Connection providers</h3>
    ${providers.err ? html`<p class="muted">Connections are not enabled on this host (${providers.err}).</p>` : html`<${Loaded} state=${providers}>${(list) => html`<table class="list" data-table="providers">
      <thead><tr><th scope="col">Provider</th><th scope="col">Sign-in</th><th scope="col">File server</th></tr></thead>
      <tbody>${list.map((p) => html`<tr><th scope="row">${p.name}</th><td>${p.auth}</td><td>${p.fileServer ? 'yes' : 'no'}</td></tr>`)}</tbody>
    </table>`}<//>`}
  </div>`;
}

// Chart draws the cost per day as bars in inline SVG, with a text
// alternative (the table beside it holds the same figures).
function Chart({ rows }) {
  const days = rows.map((r) => ({ day: r.keys?.[0] || '', cost: Number(r.costCHF || 0) })).sort((a, b) => a.day.localeCompare(b.day));
  if (days.length === 0) return html`<p class="muted">No usage in the period.</p>`;
  const W = 600, H = 160, max = Math.max(...days.map((d) => d.cost), 0.01), bw = W / days.length;
  return html`<svg role="img" aria-label=${'Cost per day, ' + days.length + ' days, highest ' + chf(max)} viewBox=${`0 0 ${W} ${H + 20}`} width="100%" style="max-width:40rem" data-chart="usage">
    ${days.map((d, i) => {
      const bh = Math.max(1, (d.cost / max) * H);
      return html`<g><rect x=${i * bw + 2} y=${H - bh} width=${Math.max(1, bw - 4)} height=${bh} fill="#0969da"><title>${d.day}: ${chf(d.cost)}</title></rect>
        ${days.length <= 15 && html`<text x=${i * bw + bw / 2} y=${H + 14} font-size="10" text-anchor="middle">${d.day.slice(5)}</text>`}</g>`;
    })}
  </svg>`;
}

function UsageTable({ api, by, label, from, name = (k) => k }) {
  const r = useLoad(api, '/billing/usage?by=' + by + '&from=' + from);
  return html`<section aria-labelledby=${'usage-' + by}><h3 id=${'usage-' + by}>By ${label}</h3>
    <${Loaded} state=${r}>${(rep) => html`<table class="list" data-usage=${by}>
      <thead><tr><th scope="col">${label}</th><th scope="col">Calls</th><th scope="col">Tokens in / out</th><th scope="col">Cost</th></tr></thead>
      <tbody>${(rep.rows || []).map((row) => html`<tr><th scope="row">${name(row.keys?.[0]) || '—'}</th><td>${row.calls}</td>
        <td>${row.promptTokens} / ${row.completionTokens}</td><td>${chf(row.costCHF)}</td></tr>`)}</tbody>
    </table>`}<//></section>`;
}

function Spending({ api, session }) {
  const budget = useLoad(api, '/billing/budget');
  // The last 30 days, from UTC midnight.
  const from = new Date(Date.now() - 30 * 86400000).toISOString().slice(0, 10);
  const daily = useLoad(api, '/billing/usage?by=day&from=' + from);
  // The report names people and workspaces by id; the admin knows them by
  // e-mail address and name.
  const people = useLoad(api, '/people');
  const email = (id) => people.data?.find((p) => p.id === id)?.email || id;
  const wsName = (id) => session.workspaces.find((w) => w.id === id)?.name || id;
  return html`<div>
    <h3>Spending limits</h3>
    <${Loaded} state=${budget}>${(b) => html`<dl class="budget" data-budget>
      <dt>Monthly limit</dt><dd>${b.monthlyCHF ? chf(b.monthlyCHF) : 'none'}</dd>
      <dt>Spent in ${b.month}</dt><dd>${chf(b.spentMonthCHF)}</dd>
      <dt>Credit</dt><dd>${b.creditCHF != null ? chf(b.creditCHF) : 'none'}</dd>
      <dt>Spent in total</dt><dd>${chf(b.spentTotalCHF)}</dd>
      <dt>New work admitted</dt><dd>${b.admitted ? 'yes' : 'no' + (b.reason ? ' (' + b.reason + ')' : '')}</dd></dl>`}<//>
    <h3>Cost per day since ${from}</h3>
    <${Loaded} state=${daily}>${(rep) => html`<${Chart} rows=${rep.rows || []} />`}<//>
    <p><a href=${API + '/billing/usage?by=workspace,user,model,day&format=csv&from=' + from} download>Usage as CSV</a></p>
    <${UsageTable} api=${api} by="workspace" label="Workspace" from=${from} name=${wsName} />
    <${UsageTable} api=${api} by="user" label="Person" from=${from} name=${email} />
    <${UsageTable} api=${api} by="model" label="Model" from=${from} />
  </div>`;
}

function Jobs({ api, session }) {
  const wsName = (id) => session.workspaces.find((w) => w.id === id)?.name || id;
  const jobs = useLoad(api, '/background?limit=100');
  return html`<${Loaded} state=${jobs}>${(list) => (list.length === 0 ? html`<p class="muted">No background jobs.</p>` : html`<table class="list" data-table="jobs">
    <thead><tr><th scope="col">Job</th><th scope="col">Status</th><th scope="col">Workspace</th><th scope="col">Created</th><th scope="col">Result or error</th></tr></thead>
    <tbody>${list.map((j) => html`<tr><th scope="row">${j.description || j.id}</th><td>${j.status}</td><td>${wsName(j.workspaceId)}</td>
      <td>${when(j.createdAt)}</td><td>${j.error || j.resultSummary || ''}</td></tr>`)}</tbody></table>`)}<//>`;
}

const auditFields = [['action', 'Action'], ['actor', 'Actor'], ['target', 'Target'], ['q', 'Text'], ['since', 'Since'], ['until', 'Until']];

function Audit({ api }) {
  const people = useLoad(api, '/people');
  const actor = (a) => (!a ? '' : (a.kind === 'user' ? people.data?.find((p) => p.id === a.id)?.email || a.id : a.kind + (a.id ? ' ' + a.id : '')) + (a.via ? ' (' + a.via + ')' : ''));
  const [filters, setFilters] = useState({});
  const [pages, setPages] = useState([]); // the cursors of the pages shown, '' first
  const [entries, setEntries] = useState(null);
  const [next, setNext] = useState('');
  const [err, setErr] = useState('');
  const query = (f, after) => {
    const q = new URLSearchParams();
    for (const [k] of auditFields) if (f[k]) q.set(k, f[k]);
    q.set('limit', '50');
    if (after) q.set('after', after);
    return q.toString();
  };
  const load = async (f, after) => {
    setErr('');
    try {
      const p = await api('GET', '/audit?' + query(f, after));
      setEntries(p.entries || []); setNext(p.next || '');
    } catch (ex) { setErr(ex.message); }
  };
  useEffect(() => { load({}, ''); setPages(['']); }, []);
  const search = (e) => { e.preventDefault(); const f = Object.fromEntries(new FormData(e.target)); setFilters(f); setPages(['']); load(f, ''); };
  const exportQuery = query(filters, '').replace(/(^|&)limit=50/, '');
  return html`<div>
    <form class="audit-filters" onSubmit=${search} role="search" aria-label="Audit log">
      ${auditFields.map(([k, l]) => html`<label>${l} <input name=${k} type=${k === 'since' || k === 'until' ? 'date' : 'text'} value=${filters[k] || ''} /></label> `)}
      <button type="submit">Search</button>
    </form>
    <p>Export: <a href=${API + '/audit/export?format=jsonl&' + exportQuery}>JSON lines</a> · <a href=${API + '/audit/export?format=csv&' + exportQuery}>CSV</a></p>
    ${err && html`<p class="error" role="alert">${err}</p>`}
    ${entries && html`<table class="list" data-table="audit">
      <thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">Actor</th><th scope="col">Target</th><th scope="col">Detail</th></tr></thead>
      <tbody>${entries.map((a) => html`<tr><td>${when(a.at)}</td><th scope="row">${a.action}</th><td>${actor(a.actor)}</td>
        <td>${a.targetType} ${a.targetId}</td><td><code>${a.detail ? JSON.stringify(a.detail) : ''}</code></td></tr>`)}</tbody></table>
      <nav aria-label="Audit pages">
        <button type="button" disabled=${pages.length <= 1} onClick=${() => { const p = pages.slice(0, -1); setPages(p); load(filters, p[p.length - 1]); }}>Previous page</button>
        <button type="button" disabled=${!next} onClick=${() => { setPages([...pages, next]); load(filters, next); }}>Next page</button>
      </nav>`}
  </div>`;
}

const views = [
  ['workspaces', 'Workspaces', Workspaces],
  ['tools', 'Tool sets', ToolSets],
  ['plugins', 'Plugins', Plugins],
  ['mcp', 'MCP servers and connections', MCP],
  ['spending', 'Spending and usage', Spending],
  ['jobs', 'Background jobs', Jobs],
  ['audit', 'Audit log', Audit],
];

export function Admin({ api, session, go }) {
  const [view, setView] = useState(() => (views.some(([k]) => '/admin/' + k === location.pathname) ? location.pathname.slice(7) : 'workspaces'));
  if (!session.user.admin) return html`<main id="main" class="signin"><p>Only the organisation's admins use the admin console.</p></main>`;
  const [, label, View] = views.find(([k]) => k === view);
  const pick = (k) => { setView(k); history.replaceState(null, '', '/admin/' + k); };
  return html`<main id="main" class="people admin" data-view="admin">
    <h1>Admin console of ${session.tenant.name}</h1>
    <nav aria-label="Admin console"><ul class="tabs">${views.map(([k, l]) => html`<li><a href=${'/admin/' + k} aria-current=${k === view ? 'page' : undefined}
      onClick=${(e) => { e.preventDefault(); pick(k); }}>${l}</a></li>`)}</ul></nav>
    <section aria-labelledby="admin-view" data-admin=${view}><h2 id="admin-view">${label}</h2>
      <${View} key=${view} api=${api} session=${session} go=${go} /></section>
  </main>`;
}
