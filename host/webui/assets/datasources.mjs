// The left sidebar's data sources (docs/ui.md): the user's own data
// sources of the workspace with their sync status, "sync now", and a form
// to add one from a connection. The panel hides itself on a server
// without connections (no secret key), whose data source routes answer 404.
import { h } from './preact.mjs';
import { useState, useEffect, useCallback } from './preact-hooks.mjs';
import htm from './htm.mjs';

const html = htm.bind(h);
const busy = (s) => s === 'queued' || s === 'running' || s === 'retrying';
const blank = { connectionId: '', service: 'issues', path: '', label: '', autoSync: false };

export function DataSources({ t, ws, api, onSynced }) {
  const [list, setList] = useState(null); // null: loading; false: not offered here
  const [err, setErr] = useState('');
  const [conns, setConns] = useState(null); // the add form's connections; null: closed
  const [form, setForm] = useState(blank);
  const load = useCallback(async () => {
    try {
      const l = await api('GET', `/datasources?workspace=${encodeURIComponent(ws)}`);
      setList(l);
      setErr('');
      return l;
    } catch (e) {
      if (e.status === 404) setList(false); else setErr(e.message);
      return null;
    }
  }, [ws]);
  useEffect(() => { setList(null); setConns(null); load(); }, [ws]);
  // A sync in flight is asked about each second; when the last ends, the files reload.
  useEffect(() => {
    if (!list || !list.some((d) => busy(d.syncState))) return;
    const timer = setTimeout(async () => {
      const l = await load();
      if (l && !l.some((d) => busy(d.syncState))) onSynced();
    }, 1000);
    return () => clearTimeout(timer);
  }, [list]);
  if (list === false) return null;

  const sync = async (d) => {
    try { await api('POST', `/datasources/${encodeURIComponent(d.id)}/sync`); await load(); } catch (e) { setErr(e.message); }
  };
  const open = async () => {
    try { setConns((await api('GET', '/connections')).filter((c) => !c.revoked)); } catch (e) { setErr(e.message); }
  };
  const set = (k) => (e) => setForm({ ...form, [k]: e.target.type === 'checkbox' ? e.target.checked : e.target.value });
  const add = async (e) => {
    e.preventDefault();
    try {
      await api('POST', '/datasources', { workspaceId: ws, connectionId: form.connectionId || (conns[0] && conns[0].id) || '',
        service: form.service.trim(), path: form.path.trim(), label: form.label.trim(), autoSync: form.autoSync, intervalSeconds: form.autoSync ? 3600 : 0 });
      setForm(blank);
      setConns(null);
      await load();
    } catch (ex) { setErr(ex.message); }
  };
  return html`<section class="panel datasources" aria-labelledby="ds-h">
    <h2 id="ds-h">${t('dataSources')}</h2>
    ${err && html`<p class="error" role="alert">${err}</p>`}
    ${list === null ? html`<p class="muted">${t('loading')}</p>` : list.length === 0 ? html`<p class="muted">${t('noDataSources')}</p>` :
      html`<ul class="ds-list">${list.map((d) => html`<li key=${d.id} data-datasource=${d.id}>
        <span class="name">${d.label}</span>
        <span class=${'badge ' + d.syncState} data-state=${d.syncState}>${t(d.syncState === 'idle' && !d.lastSynced ? 'sync_never' : 'sync_' + d.syncState)}</span>
        <button type="button" class="linkish" disabled=${busy(d.syncState) || d.connectionRevoked} onClick=${() => sync(d)}>${t('syncNow')}</button>
        ${d.connectionRevoked ? html`<p class="error">${t('connectionRevoked')}</p>` :
          d.lastError ? html`<p class="error">${d.lastError}</p>` : d.lastSummary && html`<p class="muted">${d.lastSummary}</p>`}
      </li>`)}</ul>`}
    ${conns === null ? html`<button type="button" onClick=${open}>${t('addDataSource')}</button>` :
      conns.length === 0 ? html`<p class="muted">${t('dsNoConnections')}</p>` :
      html`<form class="ds-add" onSubmit=${add}>
        <label>${t('connection')}<select value=${form.connectionId} onChange=${set('connectionId')}>
          ${conns.map((c) => html`<option value=${c.id}>${c.label} (${c.provider})</option>`)}</select></label>
        <label>${t('service')}<input value=${form.service} onInput=${set('service')} required /></label>
        <label>${t('remotePath')}<input value=${form.path} onInput=${set('path')} /></label>
        <label>${t('dsLabel')}<input value=${form.label} onInput=${set('label')} required /></label>
        <label><input type="checkbox" checked=${form.autoSync} onChange=${set('autoSync')} /> ${t('autoSyncHourly')}</label>
        <button type="submit">${t('create')}</button>
        <button type="button" onClick=${() => setConns(null)}>${t('cancel')}</button>
      </form>`}
  </section>`;
}
