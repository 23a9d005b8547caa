// A file's detail view: what it is (size, type, extractor, pages, the pages
// that could not be read and why, who uploaded it, the conversations that
// cite it), its versions, and what
// a person does with it (rename, move, tags, download, restore a version,
// delete). Loaded when a file's details are first opened.
import { h } from './preact.mjs';
import { useState, useEffect } from './preact-hooks.mjs';
import htm from './htm.mjs';

const html = htm.bind(h);
const API = '/api/v1';

function fmtSize(n) {
  if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + ' MiB';
  if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + ' KiB';
  return n + ' B';
}

// unread lists a document's pages that are not (fully) in the index, with
// the reason its page map gives.
function unread(structure) {
  const pm = structure && Array.isArray(structure.pageMap) ? structure.pageMap : [];
  return pm.filter((p) => p.textStatus && p.textStatus !== 'ocr' && p.textStatus !== 'ok');
}

// citing lists the person's conversations of the workspace whose answers
// cite the file: a citation is a link to docItem:<id> or file:<id> in
// the answer's Markdown, which the conversations' search over message
// text finds.
async function citing(api, ws, id) {
  const q = (ref) => api('GET', `/workflows?workspace=${encodeURIComponent(ws)}&limit=20&q=${encodeURIComponent(ref + ':' + id)}`).catch(() => []);
  const seen = new Set(), out = [];
  for (const w of [...await q('docItem'), ...await q('file')]) if (!seen.has(w.id)) { seen.add(w.id); out.push(w); }
  return out;
}

export function FileDetail({ t, api, ws, go, id, folders, close, changed, openFile }) {
  const [f, setF] = useState(null);
  const [cites, setCites] = useState(null);
  const [ix, setIx] = useState(null);
  const [versions, setVersions] = useState([]);
  const [err, setErr] = useState('');
  const [name, setName] = useState('');
  const [tag, setTag] = useState('');
  const [confirming, setConfirming] = useState(false);
  const load = async () => {
    try {
      const file = await api('GET', `/files/${id}`);
      setF(file); setName(file.name);
      const [st, vs, cs] = await Promise.all([
        api('GET', `/files/${id}/index`).catch(() => null),
        api('GET', `/files/${id}/versions`).catch(() => []),
        citing(api, ws || file.workspaceId, id),
      ]);
      setIx(st); setVersions(vs || []); setCites(cs);
      setErr('');
    } catch (e) { setErr(e.message); }
  };
  useEffect(() => { setF(null); setConfirming(false); load(); }, [id]);
  // Escape closes the view, as it closes the preview.
  useEffect(() => {
    const onKey = (e) => { if (e.key === 'Escape' && !e.defaultPrevented) close(); };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [close]);
  const act = async (fn) => {
    try { await fn(); setErr(''); await load(); changed(); } catch (e) { setErr(e.message); }
  };
  const patch = (body) => act(() => api('PATCH', `/files/${id}`, body));
  const remove = async () => {
    try { await api('DELETE', `/files/${id}`); changed(); close(); } catch (e) { setErr(e.message); }
  };
  if (!f) {
    return html`<section class="panel file-detail" aria-labelledby="fd-h"><h2 id="fd-h">${t('fileDetails')}</h2>
      <button type="button" class="close" onClick=${close} aria-label=${t('close')}>×</button>
      ${err ? html`<p class="error" role="alert">${err}</p>` : html`<p class="muted">${t('loading')}</p>`}</section>`;
  }
  const structure = ix && ix.index && ix.index.structure;
  const pages = structure && Array.isArray(structure.pageMap) ? structure.pageMap.length : 0;
  const missing = unread(structure);
  return html`<section class="panel file-detail" aria-labelledby="fd-h" data-testid="file-detail" data-file=${f.id}>
    <h2 id="fd-h">${f.name}</h2>
    <button type="button" class="close" onClick=${close} aria-label=${t('close')}>×</button>
    ${err && html`<p class="error" role="alert">${err}</p>`}
    <dl class="facts">
      <dt>${t('type')}</dt><dd>${f.mimeType}</dd>
      <dt>${t('size')}</dt><dd>${fmtSize(f.size)}</dd>
      <dt>${t('version')}</dt><dd>${f.version}</dd>
      <dt>${t('uploaded')}</dt><dd>${new Date(f.createdAt).toLocaleString()}${f.createdByName && html` · <span data-testid="fd-uploader">${t('uploadedBy').replace('{name}', f.createdByName)}</span>`}</dd>
      <dt>${t('indexState')}</dt><dd data-testid="fd-status" data-status=${ix ? ix.status : ''}>${ix ? t('status_' + ix.status) : '—'}
        ${ix && ix.error && html`<span class="idx-reason" data-testid="fd-error">${ix.error}</span>`}
        ${ix && ix.status === 'failed' && html` <button type="button" data-testid="fd-reindex" onClick=${() => act(() => api('POST', `/files/${id}/reindex`))}>${t('reindex')}</button>`}
        ${ix && ix.progress && ix.progress.message && html`<span class="muted"> ${ix.progress.message}</span>`}</dd>
      ${ix && ix.extractor && ix.extractor.name && html`<dt>${t('extractor')}</dt><dd>${ix.extractor.name} ${ix.extractor.version || ''}</dd>`}
      ${pages > 0 && html`<dt>${t('pages')}</dt><dd>${pages}</dd>`}
    </dl>
    ${missing.length > 0 && html`<details class="unread" data-testid="fd-unread"><summary>${t('unreadPages')}: ${missing.length}</summary>
      <ul>${missing.slice(0, 200).map((p) => html`<li><button type="button" class="linkish" onClick=${() => openFile(f.id, p.page)}>${t('page')} ${p.page}</button>
        <span class="muted"> ${t('text_' + p.textStatus)}${p.warning ? ': ' + p.warning : ''}</span></li>`)}</ul></details>`}
    <h3 id="fd-cites-h">${t('citedIn')}</h3>
    ${cites === null ? html`<p class="muted">${t('loading')}</p>` : cites.length === 0 ? html`<p class="muted" data-testid="fd-cited-none">${t('citedNowhere')}</p>` :
      html`<ul class="fd-cites" aria-labelledby="fd-cites-h" data-testid="fd-cited">${cites.map((w) => { const href = `/w/${encodeURIComponent(w.workspaceId)}/c/${encodeURIComponent(w.id)}`;
        return html`<li key=${w.id}><a href=${href} data-conv=${w.id} onClick=${(e) => { if (go) { e.preventDefault(); go(href); } }}>${w.name || w.id.slice(0, 8)}</a>
          <span class="muted"> ${new Date(w.lastActivity).toLocaleDateString()}</span></li>`; })}</ul>`}
    <form class="fd-row" onSubmit=${(e) => { e.preventDefault(); if (name.trim() && name.trim() !== f.name) patch({ name: name.trim() }); }}>
      <label for="fd-name">${t('name')}</label>
      <input id="fd-name" value=${name} onInput=${(e) => setName(e.target.value)} />
      <button type="submit">${t('rename')}</button>
    </form>
    <div class="fd-row">
      <label for="fd-folder">${t('folder')}</label>
      <select id="fd-folder" value=${f.folderId || ''} onChange=${(e) => patch({ folderId: e.target.value })}>
        <option value="">${t('noFolder')}</option>
        ${(folders || []).map((x) => html`<option value=${x.id}>${x.name}</option>`)}
      </select>
    </div>
    <div class="fd-row fd-tags">
      <span>${t('tags')}</span>
      ${(f.tags || []).map((tg) => html`<span class="tag">${tg} <button type="button" class="linkish" aria-label=${t('removeTag') + ' ' + tg} onClick=${() => patch({ removeTags: [tg] })}>×</button></span>`)}
      <form onSubmit=${(e) => { e.preventDefault(); const v = tag.trim(); if (v) { setTag(''); patch({ addTags: [v] }); } }}>
        <label class="visually-hidden" for="fd-tag">${t('addTag')}</label>
        <input id="fd-tag" placeholder=${t('addTag')} value=${tag} onInput=${(e) => setTag(e.target.value)} />
      </form>
    </div>
    <div class="fd-actions">
      <a class="button" href=${`${API}/files/${f.id}/content`} download=${f.name}>${t('download')}</a>
      <button type="button" onClick=${() => openFile(f.id, 0)}>${t('preview')}</button>
      ${confirming ? html`<span role="group" aria-label=${t('confirmDelete')}>${t('confirmDelete')}
          <button type="button" class="danger" data-testid="fd-delete-confirm" onClick=${remove}>${t('delete')}</button>
          <button type="button" onClick=${() => setConfirming(false)}>${t('cancel')}</button></span>` :
        html`<button type="button" class="danger" data-testid="fd-delete" onClick=${() => setConfirming(true)}>${t('delete')}</button>`}
    </div>
    ${versions.length > 1 && html`<h3>${t('versions')}</h3><ol class="fd-versions" data-testid="fd-versions">${versions.map((v) => html`<li key=${v.version}>
      ${t('version')} ${v.version} · ${fmtSize(v.size)} · ${new Date(v.createdAt).toLocaleString()} <span class="muted">${v.note || ''}</span>
      ${v.version !== f.version && html` <button type="button" class="linkish" onClick=${() => act(() => api('POST', `/files/${f.id}/versions/${v.version}/restore`))}>${t('restore')}</button>`}
    </li>`)}</ol>`}
  </section>`;
}
