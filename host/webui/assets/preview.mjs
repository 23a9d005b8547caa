// The cited page itself (loaded when the first preview opens): a PDF's
// page drawn by pdf.js with the cited passage marked, zoom and page
// navigation; an office document as its structure (headings, tables,
// slides with their notes, sheets) from its content objects; an image as
// itself; an archive as its tree of entries; other text as its paragraphs.
// Never the read tool's text for a model.
//
// pdf.js (pdf.min.mjs and its worker) is imported only when a PDF is
// shown. A page shown comes as a copy of its own from the page route (the
// page's objects, fonts and images, copied by the PDF plugin), so a cited
// page of a long document costs the bytes of that page in one request,
// not the file. A PDF the host cannot copy page by page is read through
// HTTP range requests on the content route, a chunk at a time.
import { h } from './preact.mjs';
import { useState, useEffect, useRef } from './preact-hooks.mjs';
import htm from './htm.mjs';
import { markdown } from './md.mjs';

const html = htm.bind(h);
const API = '/api/v1';
const metrics = globalThis.__agenthost || (globalThis.__agenthost = {});

// CHUNK is pdf.js's range request size: small enough that a page costs
// little more than its own objects, large enough that a page's fonts and
// content stream come in a few requests.
const CHUNK = 32 << 10;

// loadPdfjs imports pdf.js once and starts its worker, which every
// document shown afterwards shares (a worker costs a 1.3 MB script to
// compile: once per page load, not per preview). The worker is started
// here, beside the import of pdf.js, not by pdf.js once it has loaded:
// the two scripts load and compile at once (pdf.js takes a started
// worker as its port, GlobalWorkerOptions.workerPort in its docs).
let pdfjsLoad = null;
function loadPdfjs() {
  loadCss().catch(() => {});
  if (!pdfjsLoad) {
    const port = new Worker('/assets/pdf.worker.min.mjs', { type: 'module', name: 'agenthost-preview' });
    // A worker that cannot start (its script refused) fails the preview
    // rather than leaving it loading.
    const failed = new Promise((_, reject) => port.addEventListener('error', () => reject(new Error('pdf.js worker failed to start')), { once: true }));
    failed.catch(() => { pdfjsLoad = null; });
    port.addEventListener('message', () => { metrics.pvWorkerAt = performance.now(); }, { once: true });
    pdfjsLoad = import('./pdf.min.mjs').then((m) => {
      metrics.pvPdfjsAt = performance.now();
      return { pdfjs: m, worker: new m.PDFWorker({ name: 'agenthost-preview', port }), failed };
    });
    pdfjsLoad.catch(() => { port.terminate(); pdfjsLoad = null; });
  }
  return pdfjsLoad;
}

// loadCss adds the preview's own rules (preview.css, the text layer's),
// which are no part of the first view's styles, once.
let cssLoad = null;
function loadCss() {
  if (!cssLoad) {
    cssLoad = new Promise((resolve, reject) => {
      const l = document.createElement('link');
      l.rel = 'stylesheet';
      l.href = '/assets/preview.css';
      l.onload = resolve;
      l.onerror = () => { l.remove(); cssLoad = null; reject(new Error('preview.css did not load')); };
      document.head.append(l);
    });
  }
  return cssLoad;
}

// warm loads pdf.js and starts its worker ahead of a preview (a pointer
// over a citation of a page).
export function warm() { return loadPdfjs().then(() => {}, () => {}); }

// prefetch asks for the copy of a cited page ahead of a click on its
// citation (the newest answer's first citation of a page, a citation under
// the pointer): the copy, and the PDF plugin's instance on the server,
// are then ready when the preview opens. A page is prefetched once; the
// last PREFETCHED wait to be taken, older ones are closed.
const PREFETCHED = 3;
const prefetched = new Map(); // "file#page" → promise of pageCopy
const prefetchedOnce = new Set();
export function prefetch(fileID, page) {
  const key = `${fileID}#${page}`;
  if (!fileID || !(page > 0) || prefetchedOnce.has(key)) return;
  prefetchedOnce.add(key);
  const c = pageCopy(fileID, page);
  c.catch(() => {});
  prefetched.set(key, c);
  for (const [k, old] of prefetched) {
    if (prefetched.size <= PREFETCHED) break;
    prefetched.delete(k);
    old.then(({ task }) => task.destroy(), () => {});
  }
}

// takePrefetched hands a prefetched copy over to the preview that shows it.
function takePrefetched(fileID, page) {
  const key = `${fileID}#${page}`;
  const c = prefetched.get(key);
  prefetched.delete(key);
  return c;
}

// norm keeps the letters and digits of a text, lower-cased: the passage
// the index holds and the text pdf.js reads from the page differ in
// spacing, hyphens, ligatures and line breaks, not in their words.
const norm = (s) => String(s || '').normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

// passageItems finds a passage in a page's text items (pdf.js
// getTextContent) and returns the indexes of the items it covers. The
// passage is matched by overlapping windows of its letters, so a passage
// that runs on to the next page, or that the extractor read a little
// differently, still marks what of it is on this page.
export function passageItems(items, passage) {
  const owner = [];
  let s = '';
  items.forEach((it, i) => {
    const n = norm(it.str);
    s += n;
    for (let k = 0; k < n.length; k++) owner.push(i);
  });
  const p = norm(passage);
  const hit = new Set();
  if (!p || !s) return hit;
  const w = Math.min(24, p.length);
  for (let k = 0; k + w <= p.length; k += 8) {
    let at = s.indexOf(p.slice(k, k + w));
    while (at >= 0) {
      for (let j = at; j < at + w; j++) hit.add(owner[j]);
      at = s.indexOf(p.slice(k, k + w), at + 1);
    }
  }
  return hit;
}

// fetchRange reads bytes [begin, end) of the content route.
function fetchRange(url, begin, end) {
  const at = performance.now();
  return fetch(url, { headers: { Range: `bytes=${begin}-${end - 1}` }, credentials: 'same-origin' })
    .then((r) => {
      if (r.status !== 206) throw new Error(`range ${begin}-${end - 1}: HTTP ${r.status}`);
      return r.arrayBuffer();
    })
    .then((b) => {
      (metrics.pvRanges || (metrics.pvRanges = [])).push(`${begin}-${end} ${Math.round(at - metrics.previewOpenedAt)}..${Math.round(performance.now() - metrics.previewOpenedAt)}`);
      return new Uint8Array(b);
    });
}

// rangeTransport serves pdf.js's reads with Range requests of its own.
// pdf.js's built-in loader first asks for the whole file and cancels that
// request once it sees Accept-Ranges (with disableStream); over a fast link
// much of a small file has arrived by then. Knowing the size (the file's
// metadata), every byte the viewer gets is a range it asked for.
//
// pdf.js's first two reads are always the same, one after the other: the
// first chunk (the header) and the last (the trailer and the
// cross-reference stream or table). They are asked for here, while pdf.js
// and its worker are still loading (ahead is made before pdf.js is), so
// those two round trips overlap the scripts' compile. onError ends the
// preview with a failed read rather than leaving it loading.
function rangeAhead(url, size) {
  if (!(size > 0)) return new Map();
  const last = Math.floor(Math.max(0, size - 1) / CHUNK) * CHUNK;
  const ahead = new Map([[0, { end: Math.min(CHUNK, size), bytes: fetchRange(url, 0, Math.min(CHUNK, size)) }]]);
  if (last > 0) ahead.set(last, { end: size, bytes: fetchRange(url, last, size) });
  for (const a of ahead.values()) a.bytes.catch(() => {});
  return ahead;
}

// rangeTransport serves pdf.js's reads. Reading a page of a long document
// pdf.js asks for many ranges at once (every object stream holding a
// page of the page tree: 22 for a page of the 500-page benchmark), more
// than the six connections a browser opens to a server over HTTP/1.1, so
// they would wait in turns. Here at most FETCHES are in flight; the ranges
// asked for meanwhile wait in a queue, and when a fetch ends they go out
// together, ranges less than GAP apart as one (the bytes between them
// cost less than a round trip), each at most MERGED long.
const FETCHES = 4, GAP = 2 * CHUNK, MERGED = 16 * CHUNK;

// takeRanges takes from a queue of ranges {begin, end} the first (lowest)
// and those that follow it less than gap apart, while together they span
// at most max bytes: the ranges one fetch reads, [begin, end).
export function takeRanges(queue, gap = GAP, max = MERGED) {
  queue.sort((x, y) => x.begin - y.begin);
  const group = [queue.shift()];
  const begin = group[0].begin;
  let end = group[0].end;
  while (queue.length && queue[0].begin - end <= gap && Math.max(end, queue[0].end) - begin <= max) {
    const r = queue.shift();
    group.push(r);
    end = Math.max(end, r.end);
  }
  return { begin, end, group };
}

function rangeTransport(pdfjs, url, size, ahead, onError) {
  const t = new pdfjs.PDFDataRangeTransport(size, null);
  const queue = [];
  let inflight = 0;
  const pump = () => {
    while (inflight < FETCHES && queue.length) {
      const { begin, end, group } = takeRanges(queue);
      inflight++;
      fetchRange(url, begin, end)
        .then((b) => { for (const r of group) t.onDataRange(r.begin, b.subarray(r.begin - begin, r.end - begin)); })
        .catch(onError)
        .finally(() => { inflight--; pump(); });
    }
  };
  t.requestDataRange = (begin, end) => {
    const a = ahead.get(begin);
    if (a && a.end === end) {
      ahead.delete(begin);
      a.bytes.then((b) => t.onDataRange(begin, b), onError);
      return;
    }
    queue.push({ begin, end });
    pump();
  };
  return t;
}

// COPIES is how many pages' copies a preview keeps open: the page shown
// and those just before, for paging back and forth.
const COPIES = 6;

// pageCopy fetches page n of a PDF as a document of its own (the page
// route: the page's objects, nothing of the other pages) and opens it in
// pdf.js: {doc, pages, task}, pages the document's count, task pdf.js's
// loading task (which closes the document). pdf.js and the copy
// load at once.
function pageCopy(fileID, n) {
  const at = performance.now();
  const copy = fetch(`${API}/files/${fileID}/pages/${n}/pdf`, { credentials: 'same-origin' }).then(async (r) => {
    if (!r.ok) throw new Error(`page ${n}: HTTP ${r.status}`);
    const pages = Number(r.headers.get('Agenthost-Page-Count')) || 0;
    const data = new Uint8Array(await r.arrayBuffer());
    metrics.pvCopyAt = performance.now();
    (metrics.pvRanges || (metrics.pvRanges = [])).push(`page ${n} ${data.length} ${Math.round(at - metrics.previewOpenedAt)}..${Math.round(metrics.pvCopyAt - metrics.previewOpenedAt)}`);
    return { data, pages };
  });
  return Promise.all([copy, loadPdfjs()]).then(([{ data, pages }, { pdfjs, worker, failed }]) => {
    const task = pdfjs.getDocument({ worker, data, isEvalSupported: false });
    return Promise.race([task.promise, failed]).then((doc) => ({ doc, pages, task }), (e) => { task.destroy(); throw e; });
  });
}

// PdfView draws a page of a PDF. Each page shown is first asked for as a
// copy of its own (pageCopy): for a long document that is one request of
// the page's bytes instead of a chain of range requests through the
// document's page tree. A file the host cannot copy page by page (an
// encrypted one: the page route answers 422) is read whole instead, by
// ranges (rangeTransport), from then on.
function PdfView({ t, file, page: initial, passage }) {
  // view: the document drawn (doc), the page of it drawn (at) and the
  // page of the file that is (page).
  const [view, setView] = useState(null);
  const [total, setTotal] = useState(0);
  const [page, setPage] = useState(Math.max(1, initial || 1));
  const [scale, setScale] = useState(0);
  const [err, setErr] = useState('');
  const [drawn, setDrawn] = useState(0);
  const [texted, setTexted] = useState(0);
  const [marks, setMarks] = useState([]);
  const canvas = useRef();
  const box = useRef();
  const text = useRef();
  // copies: page → promise of its copy; whole: the file read by ranges,
  // once a copy was refused. Both are this preview's (its key is the file).
  const copies = useRef(new Map());
  const whole = useRef(null);
  useEffect(() => { setPage(Math.max(1, initial || 1)); }, [initial]);
  useEffect(() => () => {
    for (const c of copies.current.values()) c.then(({ task }) => task.destroy(), () => {});
    if (whole.current) whole.current.task.then((task) => task && task.destroy(), () => {});
  }, []);
  useEffect(() => {
    let live = true;
    setErr('');
    const url = `${API}/files/${file.id}/content`;
    const onError = (e) => { if (live) setErr(e.message); };
    const readWhole = () => {
      if (!whole.current) {
        const ahead = rangeAhead(url, file.size);
        let resolveTask;
        const task = new Promise((r) => { resolveTask = r; });
        const doc = loadPdfjs().then(({ pdfjs, worker, failed }) => {
          const tk = pdfjs.getDocument({
            worker,
            range: rangeTransport(pdfjs, url, file.size, ahead, (e) => whole.current && whole.current.onError(e)),
            rangeChunkSize: CHUNK, disableAutoFetch: true, disableStream: true,
            // The page's CSP allows no eval: pdf.js must not try it.
            isEvalSupported: false,
          });
          resolveTask(tk);
          return Promise.race([tk.promise, failed]);
        });
        doc.catch(() => resolveTask(null));
        whole.current = { doc, task, onError };
      }
      whole.current.onError = onError;
      return whole.current.doc.then((doc) => { setTotal(doc.numPages); return { doc, at: Math.min(page, doc.numPages), page }; });
    };
    let shown;
    if (whole.current) {
      shown = readWhole();
    } else {
      let c = copies.current.get(page);
      if (!c) {
        c = takePrefetched(file.id, page) || pageCopy(file.id, page);
        copies.current.set(page, c);
        // The oldest copies beyond COPIES are closed.
        for (const [k, old] of copies.current) {
          if (copies.current.size <= COPIES) break;
          copies.current.delete(k);
          old.then(({ task }) => task.destroy(), () => {});
        }
      }
      shown = c.then(({ doc, pages }) => {
        if (pages) setTotal(pages);
        return { doc, at: 1, page };
      }, () => { copies.current.delete(page); return readWhole(); });
    }
    shown.then((v) => { metrics.pvDocAt = performance.now(); if (live) setView(v); }, onError);
    return () => { live = false; };
  }, [file.id, page]);
  useEffect(() => {
    if (!view) return;
    const { doc, at, page: pageOfFile } = view;
    let live = true, render = null, layer = null;
    setDrawn(0);
    if (text.current) text.current.replaceChildren();
    (async () => {
      try {
        const p = await doc.getPage(at);
        metrics.pvPageAt = performance.now();
        if (!live) return;
        // Fit the page's width to the panel at first; zoom from there.
        const base = p.getViewport({ scale: 1 });
        const fit = Math.max(0.25, Math.min(3, ((box.current && box.current.clientWidth) || 600) / base.width));
        const s = scale || fit;
        if (!scale) setScale(fit);
        const vp = p.getViewport({ scale: s });
        const c = canvas.current;
        const ratio = window.devicePixelRatio || 1;
        c.width = Math.floor(vp.width * ratio); c.height = Math.floor(vp.height * ratio);
        c.style.width = Math.floor(vp.width) + 'px'; c.style.height = Math.floor(vp.height) + 'px';
        render = p.render({ canvas: c, canvasContext: c.getContext('2d'), viewport: vp, transform: ratio !== 1 ? [ratio, 0, 0, ratio, 0, 0] : undefined });
        const [, tc] = await Promise.all([render.promise.then(() => { metrics.pvRenderAt = performance.now(); }), passage ? p.getTextContent() : null]);
        if (!live) return;
        const m = [];
        if (tc) {
          const { pdfjs } = await loadPdfjs();
          for (const i of passageItems(tc.items, passage)) {
            const it = tc.items[i];
            const tx = pdfjs.Util.transform(vp.transform, it.transform);
            const fh = Math.hypot(tx[2], tx[3]);
            m.push({ left: tx[4], top: tx[5] - fh, width: it.width * s, height: fh * 1.15 });
          }
        }
        setMarks(m);
        setDrawn(pageOfFile);
        metrics.previewDrawnAt = performance.now();
        // The page's text over the canvas, transparent (pdf.js's text
        // layer): it can be selected and copied, and a screen reader reads
        // it. It follows the drawing, which does not wait for it.
        // Unstyled, the layer's text would show over the page: without
        // its rules there is no layer.
        const [{ pdfjs }, styled] = await Promise.all([loadPdfjs(), loadCss().then(() => true, () => false)]);
        if (!live || !text.current || !styled) return;
        text.current.style.setProperty('--total-scale-factor', String(s));
        layer = new pdfjs.TextLayer({ textContentSource: tc || p.streamTextContent(), container: text.current, viewport: vp });
        await layer.render();
        if (live) setTexted(pageOfFile);
      } catch (e) {
        if (live && e && e.name !== 'RenderingCancelledException') setErr(e.message);
      }
    })();
    return () => { live = false; if (render) render.cancel(); if (layer) layer.cancel(); };
  }, [view, scale, passage]);
  if (err) return html`<p class="error" role="alert">${err}</p>`;
  const n = total;
  const go = (p) => setPage(Math.max(1, Math.min(n || 1, p)));
  const zoom = (f) => setScale((s) => Math.max(0.25, Math.min(5, (s || 1) * f)));
  return html`<div class="pdf-view" ref=${box}>
    <div class="pdf-tools" role="toolbar" aria-label=${t('pageTools')}>
      <button type="button" onClick=${() => go(page - 1)} disabled=${page <= 1} aria-label=${t('prevPage')} data-testid="prev-page">‹</button>
      <label>${t('page')} <input type="number" min="1" max=${n || undefined} value=${page} data-testid="page-input"
        onChange=${(e) => go(Number(e.target.value) || 1)} /></label>
      <span class="muted">/ ${n || '…'}</span>
      <button type="button" onClick=${() => go(page + 1)} disabled=${!n || page >= n} aria-label=${t('nextPage')} data-testid="next-page">›</button>
      <button type="button" onClick=${() => zoom(1 / 1.25)} aria-label=${t('zoomOut')} data-testid="zoom-out">−</button>
      <span class="muted" data-testid="zoom">${Math.round((scale || 1) * 100)} %</span>
      <button type="button" onClick=${() => zoom(1.25)} aria-label=${t('zoomIn')} data-testid="zoom-in">+</button>
    </div>
    ${(!view || view.page !== page) && html`<p class="muted">${t('loading')}</p>`}
    <div class="pdf-page" tabindex="0" data-testid="pdf-page" data-page=${page} data-drawn=${drawn || undefined} data-marks=${drawn ? marks.length : undefined}>
      <canvas ref=${canvas} role="img" aria-label=${`${file.name}, ${t('page')} ${page}${n ? ' / ' + n : ''}`}></canvas>
      ${marks.map((r, i) => html`<mark key=${i} class="hl" style=${`left:${r.left}px;top:${r.top}px;width:${r.width}px;height:${r.height}px`}></mark>`)}
      <div class="textLayer" ref=${text} data-testid="text-layer" data-page=${texted || undefined}></div>
    </div>
    ${passage && html`<blockquote class="passage" tabindex="0" data-testid="passage"><span class="visually-hidden">${t('citedPassage')}: </span>${passage.slice(0, 600)}</blockquote>`}
  </div>`;
}

// isArchive: the containers the host lists entries of.
const isArchive = (m) => /zip|x-tar|gzip|x-7z|x-rar|vnd\.rar|x-bzip|x-xz|compressed/.test(m);
const isPdf = (m) => m === 'application/pdf';

// tree turns container paths (a/b/c.txt) into nested folders; the
// archive's own name in front is left out.
function tree(entries, root) {
  const top = { kids: new Map() };
  for (const e of entries) {
    const p = e.path.startsWith(root + '/') ? e.path.slice(root.length + 1) : e.path;
    let n = top;
    const parts = p.split('/').filter(Boolean);
    parts.forEach((seg, i) => {
      if (!n.kids.has(seg)) n.kids.set(seg, { name: seg, kids: new Map() });
      n = n.kids.get(seg);
      if (i === parts.length - 1) n.entry = e;
    });
  }
  return top;
}

function TreeNode({ n }) {
  const kids = [...n.kids.values()];
  const e = n.entry;
  return html`<li data-entry=${e ? e.path : undefined}>
    <span class=${kids.length ? 'dir' : 'leaf'}>${n.name}</span>
    ${e && !kids.length && html` <span class="muted">${e.mimeType || ''}${e.size ? ' · ' + e.size + ' B' : ''}${e.error ? ' · ' + e.error : ''}</span>`}
    ${kids.length > 0 && html`<ul>${kids.map((k) => html`<${TreeNode} key=${k.name} n=${k} />`)}</ul>`}
  </li>`;
}

function ArchiveView({ t, file, api }) {
  const [entries, setEntries] = useState(null);
  const [err, setErr] = useState('');
  useEffect(() => { api('GET', `/files/${file.id}/entries`).then(setEntries, (e) => setErr(e.message)); }, [file.id]);
  if (err) return html`<p class="error" role="alert">${err}</p>`;
  if (!entries) return html`<p class="muted">${t('loading')}</p>`;
  if (entries.length === 0) return html`<p class="muted">${t('noEntries')}</p>`;
  const top = tree(entries, file.name);
  return html`<ul class="archive-tree" data-testid="archive-tree" aria-label=${t('entries')}>
    ${[...top.kids.values()].map((k) => html`<${TreeNode} key=${k.name} n=${k} />`)}</ul>`;
}

// isHeading: an office extractor labels a heading's object with the
// heading's text (content.Ref.Label), and no other paragraph.
const isHeading = (o) => {
  const r = o.contextRef || {};
  return !!r.label && !r.slideIndex && !r.sheetName && norm(o.data).startsWith(norm(r.label)) && norm(o.data).length <= norm(r.label).length + 2;
};

// blocks groups a document's content objects by what they are: slides
// (with their notes), sheets, or the body's headings, tables and
// paragraphs.
function blocks(objs) {
  const out = [];
  const slides = new Map(), sheets = new Map();
  for (const o of objs) {
    const r = o.contextRef || {}, md = o.metadata || {};
    if (o.contentType !== 'text') continue; // pictures are not kept as bytes
    if (r.slideIndex) {
      if (!slides.has(r.slideIndex)) { const s = { kind: 'slide', n: r.slideIndex, title: r.label, body: [], notes: [] }; slides.set(r.slideIndex, s); out.push(s); }
      const s = slides.get(r.slideIndex);
      (/\/notes$/.test(r.location || '') || /^notesSlide/.test(r.part || '') ? s.notes : s.body).push(o.data);
    } else if (r.sheetName) {
      if (!sheets.has(r.sheetName)) { const s = { kind: 'sheet', name: r.sheetName, body: [] }; sheets.set(r.sheetName, s); out.push(s); }
      sheets.get(r.sheetName).body.push(o.data);
    } else if (md.heading || isHeading(o)) {
      // The store keeps an object's reference, not its metadata: a
      // heading is the object whose label is its own text, at the depth of
      // its section (1, 1.2, 1.2.3).
      const level = Number(md.heading) || (r.sectionId ? r.sectionId.split('.').length : 1);
      out.push({ kind: 'heading', level: Math.min(6, Math.max(1, level)), text: o.data });
    } else if (md.table || /^\s*\|.*\|\s*\n\s*\|?\s*:?-{2,}/.test(o.data)) {
      out.push({ kind: 'table', text: o.data });
    } else {
      out.push({ kind: 'para', text: o.data, part: r.part && r.part !== 'document' ? r.part : '' });
    }
  }
  return out;
}

// The document's own headings sit under the preview's h2: a level 1
// heading is an h3.
const hTag = (level) => 'h' + Math.min(6, level + 2);

function StructureView({ t, file, api, page }) {
  const [objs, setObjs] = useState(null);
  const [more, setMore] = useState(0);
  const [err, setErr] = useState('');
  const load = (offset) => api('GET', `/files/${file.id}/objects?limit=200&maxBytes=1048576&offset=${offset}${page ? '&page=' + page : ''}`)
    .then((pg) => { setObjs((o) => (offset ? [...(o || []), ...pg.objects] : pg.objects)); setMore(pg.nextOffset || 0); }, (e) => setErr(e.message));
  useEffect(() => { setObjs(null); load(0); }, [file.id, page]);
  if (err) return html`<p class="error" role="alert">${err}</p>`;
  if (!objs) return html`<p class="muted">${t('loading')}</p>`;
  const bs = blocks(objs);
  if (bs.length === 0) return html`<p class="muted">${t('noText')}</p>`;
  return html`<div class="doc-structure" data-testid="doc-structure" tabindex="0">
    ${bs.map((b, i) => {
      switch (b.kind) {
        case 'heading': return h(hTag(b.level), { key: i, class: 'doc-h' }, b.text);
        case 'table': return html`<div key=${i} class="doc-table">${markdown(b.text)}</div>`;
        case 'slide': return html`<section key=${i} class="slide" data-slide=${b.n} aria-label=${`${t('slide')} ${b.n}`}>
          <h3>${t('slide')} ${b.n}${b.title ? ': ' + b.title : ''}</h3>
          ${b.body.map((x, j) => html`<div key=${j} class="slide-body">${markdown(x)}</div>`)}
          ${b.notes.length > 0 && html`<aside class="notes" data-testid="slide-notes"><h4>${t('notes')}</h4>${b.notes.map((x, j) => html`<p key=${j}>${x}</p>`)}</aside>`}
        </section>`;
        case 'sheet': return html`<section key=${i} class="sheet" data-sheet=${b.name}><h3>${t('sheet')} ${b.name}</h3>${b.body.map((x, j) => html`<div key=${j} class="doc-table">${markdown(x)}</div>`)}</section>`;
        default: return html`<p key=${i} class=${b.part ? 'doc-p part' : 'doc-p'}>${b.part && html`<span class="muted">${b.part}: </span>`}${b.text}</p>`;
      }
    })}
    ${more > 0 && html`<button type="button" onClick=${() => load(more)}>${t('more')}</button>`}
  </div>`;
}

// Preview is the panel (a full-screen sheet on a phone) for target
// {id, page, passage}.
export function Preview({ t, api, target, close }) {
  const [loaded, setFile] = useState(null);
  const [err, setErr] = useState('');
  const closer = useRef();
  useEffect(() => {
    let live = true;
    setFile(null); setErr('');
    // A citation of a page is a PDF's, nearly always: pdf.js loads while
    // the file's metadata is asked for, not after.
    if (target.page) loadPdfjs().catch(() => {});
    api('GET', `/files/${target.id}`).then((f) => { if (live) setFile(f); }, (e) => { if (live) setErr(e.message); });
    return () => { live = false; };
  }, [target.id]);
  // Escape closes the preview wherever the focus is, unless something
  // focused handles it first (the composer's suggestions).
  useEffect(() => {
    const onKey = (e) => { if (e.key === 'Escape' && !e.defaultPrevented) close(); };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [close]);
  // The sheet takes the focus, so a keyboard or screen reader is where
  // the cited page is.
  useEffect(() => { closer.current && closer.current.focus({ preventScroll: true }); }, [target.id, target.page]);
  // The state of the file shown before this target is not this one's:
  // until its own metadata is in, nothing of the last file is drawn under
  // the new title, and each view starts afresh per file (key).
  const file = loaded && loaded.id === target.id ? loaded : null;
  const m = file ? file.mimeType : '';
  return html`<section class="panel preview" role="dialog" aria-modal="false" aria-labelledby="preview-h" data-file=${target.id} data-page=${target.page || ''}
      data-kind=${!file ? '' : isPdf(m) ? 'pdf' : m.startsWith('image/') ? 'image' : isArchive(m) ? 'archive' : 'structure'}>
    <h2 id="preview-h">${t('preview')}${file ? ': ' + file.name : ''}${target.page ? ` — ${t('page')} ${target.page}` : ''}</h2>
    <button type="button" class="close" ref=${closer} onClick=${close} aria-label=${t('closePreview')}>×</button>
    ${err ? html`<p class="error" role="alert">${err}</p>` : !file ? html`<p class="muted">${t('loading')}</p>` :
      isPdf(m) ? html`<${PdfView} key=${file.id} t=${t} file=${file} page=${target.page} passage=${target.passage} />` :
      m.startsWith('image/') ? html`<img src=${`${API}/files/${file.id}/content`} alt=${file.name} data-testid="preview-image" />` :
      isArchive(m) ? html`<${ArchiveView} key=${file.id} t=${t} file=${file} api=${api} />` :
      html`<${StructureView} key=${file.id} t=${t} file=${file} api=${api} />`}
  </section>`;
}
