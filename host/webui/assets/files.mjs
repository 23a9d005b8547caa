// The area of files and knowledge (docs/ui.md#layout), loaded when it is
// first opened: the files (drag-and-drop or a picker, tags, folders,
// uploads with their progress, each file's index state, filter (by name,
// type or tag, state and upload date), sort and
// several files at once) and knowledge search, whose hits open the preview
// at their page. The file list's data is the workspace's (app.mjs keeps it,
// the composer's @file completion needs it too); api and upload are the
// page's.
import { h } from './preact.mjs';
import { useState, useRef } from './preact-hooks.mjs';
import htm from './htm.mjs';

const html = htm.bind(h);

// periods filter the list by when a file was uploaded: today (since the
// local midnight), the last 7 or 30 days, or before those 30 days.
export const periods = ['today', 'week', 'month', 'older'];
export function inPeriod(f, period, now = new Date()) {
  if (!period) return true;
  const at = Date.parse(f.createdAt);
  if (Number.isNaN(at)) return period === 'older';
  const day = 86400000, midnight = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  switch (period) {
    case 'today': return at >= midnight;
    case 'week': return at >= now.getTime() - 7 * day;
    case 'month': return at >= now.getTime() - 30 * day;
    case 'older': return at < now.getTime() - 30 * day;
  }
  return true;
}

// sortFiles orders the file list by what the person picked.
function sortFiles(list, by) {
  const cmp = {
    name: (a, b) => a.name.localeCompare(b.name),
    newest: (a, b) => (b.createdAt || '').localeCompare(a.createdAt || ''),
    oldest: (a, b) => (a.createdAt || '').localeCompare(b.createdAt || ''),
    type: (a, b) => a.mimeType.localeCompare(b.mimeType) || a.name.localeCompare(b.name),
    size: (a, b) => (b.size || 0) - (a.size || 0),
  }[by] || ((a, b) => a.name.localeCompare(b.name));
  return [...list].sort(cmp);
}

export function FileBrowser({ t, api, upload, ws, files, folders, reload, openFile, openDetail, error }) {
  const [folder, setFolder] = useState('');
  const [uploads, setUploads] = useState([]);
  const [over, setOver] = useState(false);
  const [tags, setTags] = useState('');
  const [entries, setEntries] = useState({});
  // Passwords typed for encrypted files (id → {value, status, error}); the
  // answer's status replaces the file's until the list is asked again.
  const [pw, setPw] = useState({});
  const givePassword = async (e, f) => {
    e.preventDefault();
    const cur = pw[f.id] || {};
    if (!cur.value) return;
    try {
      const s = await api('POST', `/files/${f.id}/password`, { password: cur.value });
      setPw({ ...pw, [f.id]: { value: '', status: s.status, error: s.status === 'encrypted' ? t('wrongPassword') : '' } });
    } catch (err) { setPw({ ...pw, [f.id]: { value: '', status: cur.status, error: err.message } }); }
  };
  const [newFolder, setNewFolder] = useState('');
  const [folderErr, setFolderErr] = useState('');
  const [filter, setFilter] = useState('');
  const [stateFilter, setStateFilter] = useState('');
  const [period, setPeriod] = useState('');
  const [sort, setSort] = useState('name');
  const [picked, setPicked] = useState({});
  const [bulkErr, setBulkErr] = useState('');
  const [confirmBulk, setConfirmBulk] = useState(false);
  const input = useRef();
  const pickedIds = Object.keys(picked).filter((id) => picked[id] && files && files.some((f) => f.id === id));
  // bulk runs one action over the selected files, one request each, and
  // says which failed instead of stopping at the first.
  const bulk = async (fn) => {
    const failed = [];
    for (const id of pickedIds) { try { await fn(id); } catch (e) { failed.push(e.message); } }
    setBulkErr(failed.length ? `${failed.length} ${t('failedOf')} ${pickedIds.length}: ${failed[0]}` : '');
    setPicked({});
    reload();
  };
  const makeFolder = async (e) => {
    e.preventDefault();
    if (!newFolder.trim()) return;
    setFolderErr('');
    try {
      const f = await api('POST', `/workspaces/${ws}/folders`, { name: newFolder.trim() });
      setNewFolder('');
      await reload();
      setFolder(f.id);
    } catch (ex) { setFolderErr(ex.message); }
  };
  const send = async (list) => {
    for (const f of list) {
      const u = { name: f.name, progress: 0, error: '' };
      setUploads((us) => [...us, u]);
      try {
        const into = folder && folder !== 'root' ? folder : '';
        await upload(ws, f, tags, into, (p) => { u.progress = p; setUploads((us) => [...us]); });
        u.progress = 1; u.done = true;
      } catch (e) { u.error = e.message; }
      setUploads((us) => [...us]);
      reload();
    }
    // Tags name one batch: the next upload starts without them.
    setTags('');
    setTimeout(() => setUploads((us) => us.filter((x) => !x.done)), 1500);
  };
  const drop = (e) => { e.preventDefault(); setOver(false); send([...e.dataTransfer.files]); };
  const showEntries = async (f) => {
    if (entries[f.id]) { setEntries({ ...entries, [f.id]: undefined }); return; }
    try { setEntries({ ...entries, [f.id]: await api('GET', `/files/${f.id}/entries`) }); } catch (e) { setEntries({ ...entries, [f.id]: e.message }); }
  };
  const q = filter.trim().toLowerCase();
  const shown = files && sortFiles(files.filter((f) => (folder === '' || (folder === 'root' ? !f.folderId : f.folderId === folder)) &&
    (q === '' || f.name.toLowerCase().includes(q) || f.mimeType.toLowerCase().includes(q) || (f.tags || []).some((tg) => tg.toLowerCase().includes(q))) &&
    (stateFilter === '' || (f.index || 'pending') === stateFilter) && inPeriod(f, period)), sort);
  return html`<section class="panel files" aria-labelledby="files-h">
    <h2 id="files-h">${t('files')}</h2>
    <div class=${'drop' + (over ? ' over' : '')} data-testid="dropzone"
      onDragOver=${(e) => { e.preventDefault(); setOver(true); }} onDragLeave=${() => setOver(false)} onDrop=${drop}>
      <span>${t('dropHere')}</span>
      <input ref=${input} type="file" multiple class="visually-hidden" id="file-input" tabindex="-1" aria-label=${t('chooseFiles')} onChange=${(e) => { send([...e.target.files]); e.target.value = ''; }} />
      <button type="button" onClick=${() => input.current.click()}>${t('chooseFiles')}</button>
      <label class="visually-hidden" for="upload-tags">${t('tagsPlaceholder')}</label>
      <input id="upload-tags" placeholder=${t('tagsPlaceholder')} value=${tags} onInput=${(e) => setTags(e.target.value)} />
      <p class="upload-target muted" data-testid="upload-target">${t('uploadsGoTo')}: ${folder && folder !== 'root' && folders ? ((folders.find((x) => x.id === folder) || {}).name || '') : t('noFolder')}</p>
    </div>
    ${uploads.map((u) => html`<div class="upload" key=${u.name}>
      <span>${u.name}</span>
      <progress max="1" value=${u.progress} aria-label=${t('uploading') + ' ' + u.name}>${Math.round(u.progress * 100)}%</progress>
      ${u.error && html`<span class="error" role="alert">${u.error}</span>`}
    </div>`)}
    <div class="folders">
      ${folders && folders.length > 0 && html`<label class="folder-pick">${t('folders')}
        <select value=${folder} onChange=${(e) => setFolder(e.target.value)} id="folder-pick">
          <option value="">${t('allFiles')}</option><option value="root">${t('noFolder')}</option>
          ${folders.map((f) => html`<option value=${f.id}>${f.name}</option>`)}
        </select></label>`}
      <form class="new-folder" onSubmit=${makeFolder}>
        <label class="visually-hidden" for="new-folder">${t('newFolder')}</label>
        <input id="new-folder" placeholder=${t('newFolder')} value=${newFolder} onInput=${(e) => setNewFolder(e.target.value)} />
        <button type="submit">${t('create')}</button>
      </form>
      ${folderErr && html`<p class="error" role="alert">${folderErr}</p>`}
    </div>
    ${files && files.length > 0 && html`<div class="file-tools">
      <label class="visually-hidden" for="file-filter">${t('filterFiles')}</label>
      <input id="file-filter" type="search" placeholder=${t('filterFiles')} value=${filter} onInput=${(e) => setFilter(e.target.value)} />
      <label class="visually-hidden" for="file-state">${t('indexState')}</label>
      <select id="file-state" value=${stateFilter} onChange=${(e) => setStateFilter(e.target.value)}>
        <option value="">${t('anyState')}</option>
        ${['indexed', 'failed', 'encrypted', 'pending'].map((st) => html`<option value=${st}>${t('status_' + st)}</option>`)}
      </select>
      <label class="visually-hidden" for="file-date">${t('uploaded')}</label>
      <select id="file-date" value=${period} onChange=${(e) => setPeriod(e.target.value)}>
        <option value="">${t('anyTime')}</option>
        ${periods.map((k) => html`<option value=${k}>${t('period_' + k)}</option>`)}
      </select>
      <label class="visually-hidden" for="file-sort">${t('sortBy')}</label>
      <select id="file-sort" value=${sort} onChange=${(e) => setSort(e.target.value)}>
        ${['name', 'newest', 'oldest', 'type', 'size'].map((k) => html`<option value=${k}>${t('sort_' + k)}</option>`)}
      </select>
    </div>`}
    ${pickedIds.length > 0 && html`<div class="bulk" role="group" aria-label=${t('selected')} data-testid="bulk">
      <span>${pickedIds.length} ${t('selected')}</span>
      <label class="visually-hidden" for="bulk-move">${t('moveTo')}</label>
      <select id="bulk-move" value="-" onChange=${(e) => { const v = e.target.value; if (v !== '-') bulk((id) => api('PATCH', `/files/${id}`, { folderId: v === 'root' ? '' : v })); }}>
        <option value="-">${t('moveTo')}…</option><option value="root">${t('noFolder')}</option>
        ${(folders || []).map((x) => html`<option value=${x.id}>${x.name}</option>`)}
      </select>
      <form onSubmit=${(e) => { e.preventDefault(); const v = e.target.elements[0].value.trim(); if (v) bulk((id) => api('PATCH', `/files/${id}`, { addTags: [v] })); }}>
        <label class="visually-hidden" for="bulk-tag">${t('addTag')}</label><input id="bulk-tag" placeholder=${t('addTag')} />
      </form>
      ${confirmBulk ? html`<span>${t('confirmDeleteMany').replace('{n}', pickedIds.length)}
          <button type="button" class="danger" data-testid="bulk-delete-confirm" onClick=${() => { setConfirmBulk(false); bulk((id) => api('DELETE', `/files/${id}`)); }}>${t('delete')}</button></span>` :
        html`<button type="button" class="danger" data-testid="bulk-delete" onClick=${() => setConfirmBulk(true)}>${t('delete')}</button>`}
      <button type="button" onClick=${() => { setPicked({}); setConfirmBulk(false); }}>${t('cancel')}</button>
    </div>`}
    ${bulkErr && html`<p class="error" role="alert">${bulkErr}</p>`}
    ${error ? html`<p class="error" role="alert">${error}</p>` : shown === null ? html`<p class="muted">${t('loading')}</p>` :
      shown.length === 0 ? html`<p class="muted" data-testid="files-empty">${t(files.length === 0 ? 'noFiles' : folder === 'root' ? 'noFilesOutsideFolders' : 'folderEmpty')}</p>` :
      html`<ul class="file-list">${shown.map((f) => html`<li key=${f.id} data-file=${f.id}>
        <input type="checkbox" class="pick" aria-label=${t('select') + ' ' + f.name} checked=${!!picked[f.id]} onChange=${(e) => setPicked({ ...picked, [f.id]: e.target.checked })} />
        <button type="button" class="file" onClick=${() => openFile(f.id, 0)}>${f.name}</button>
        <button type="button" class="linkish details" data-testid="file-details" aria-label=${t('detailsShort') + ': ' + f.name} onClick=${() => openDetail(f.id)}>${t('detailsShort')}</button>
        <span class=${'idx ' + ((pw[f.id] && pw[f.id].status) || f.index || 'pending')} data-status=${(pw[f.id] && pw[f.id].status) || f.index || 'pending'}>${t('status_' + ((pw[f.id] && pw[f.id].status) || f.index || 'pending'))}</span>
        ${f.index === 'failed' && f.indexError && html`<span class="idx-reason" data-testid="index-error">${f.indexError}</span>`}
        ${f.index === 'indexed' && f.indexNote && html`<span class="idx-reason note" data-testid="index-note">${f.indexNote}</span>`}
        ${((pw[f.id] && pw[f.id].status) || f.index) === 'encrypted' && html`<form class="file-password" onSubmit=${(e) => givePassword(e, f)}>
          <input type="password" autocomplete="off" aria-label=${t('filePassword')} placeholder=${t('filePassword')} value=${(pw[f.id] && pw[f.id].value) || ''}
            onInput=${(e) => setPw({ ...pw, [f.id]: { ...(pw[f.id] || {}), value: e.target.value } })} />
          <button type="submit">${t('unlock')}</button>
          ${pw[f.id] && pw[f.id].error && html`<span class="error" role="alert">${pw[f.id].error}</span>`}
        </form>`}
        ${f.progress && (f.progress.pending || f.progress.searchable < f.progress.pages) && html`<span class=${'idx-progress' + (f.progress.pending ? ' pending' : ' partial')} data-testid="index-progress"
          data-searchable=${f.progress.searchable} data-pages=${f.progress.pages} title=${f.progress.message}>${f.progress.message}</span>`}
        ${f.tags && f.tags.map((tg) => html`<span class="tag">${tg}</span>`)}
        ${f.container && html`<button type="button" class="linkish" aria-expanded=${!!entries[f.id]} onClick=${() => showEntries(f)}>${t('entries')}</button>`}
        ${Array.isArray(entries[f.id]) && html`<ul class="entries">${entries[f.id].map((en) => html`<li>${en.path} <span class="muted">${en.status}</span></li>`)}</ul>`}
        ${typeof entries[f.id] === 'string' && html`<p class="error">${entries[f.id]}</p>`}
      </li>`)}</ul>`}
  </section>`;
}

// entryOf is an archive hit's entry inside the archive (the container path
// starts with the archive's own name).
const entryOf = (archive, p) => (p.startsWith(archive + '/') ? p.slice(archive.length + 1) : p);

export function Search({ t, api, ws, openFile }) {
  const [q, setQ] = useState('');
  const [hits, setHits] = useState(null);
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    if (!q.trim()) return;
    setBusy(true); setErr('');
    try { setHits(await api('GET', `/workspaces/${ws}/search?q=${encodeURIComponent(q)}&limit=10`)); } catch (ex) { setErr(ex.message); } finally { setBusy(false); }
  };
  return html`<section class="panel search" aria-labelledby="search-h">
    <h2 id="search-h">${t('knowledge')}</h2>
    <form onSubmit=${submit} role="search">
      <label class="visually-hidden" for="search-q">${t('search')}</label>
      <input id="search-q" type="search" placeholder=${t('searchPlaceholder')} value=${q} onInput=${(e) => setQ(e.target.value)} />
      <button type="submit" disabled=${busy}>${t('search')}</button>
    </form>
    ${err && html`<p class="error" role="alert">${err}</p>`}
    ${busy && html`<p class="muted">${t('loading')}</p>`}
    ${hits && (hits.length === 0 ? html`<p class="muted">${t('noHits')}</p>` : html`<ol class="hits">${hits.map((hit) => html`<li key=${hit.id}>
      <button type="button" class="cite" onClick=${() => openFile(hit.fileId, hit.contextRef.pageIndex || 0, hit.text)}>
        ${hit.fileName}${hit.contextRef.containerPath ? html` › <span class="entry" data-testid="hit-entry">${entryOf(hit.fileName, hit.contextRef.containerPath)}</span>` : ''}${hit.contextRef.pageIndex ? `, ${t('page')} ${hit.contextRef.pageIndex}` : ''}</button>
      <p class="snippet">${hit.text.slice(0, 240)}</p></li>`)}</ol>`)}
  </section>`;
}
