// A conversation's export (docs/ui.md, "Export"): the branch shown, each
// answer's citations, and what the tools did, as one document outline, the
// one the document plugin takes (docgen's generateDocument: a title and
// headings, paragraphs, lists and tables). Markdown is written here; a PDF
// is written by the plugin, in its sandbox, and kept in the workspace's
// files. Loaded with the first conversation shown, not with the page. outline
// and toMarkdown are pure: node tests them.
import { h } from './preact.mjs';
import { useEffect, useState } from './preact-hooks.mjs';
import htm from './htm.mjs';
import { shown } from './conv.mjs';

const html = htm.bind(h);

// A citation in an answer: [label](docItem:ID#page=N), as md.mjs renders it.
const citeRe = /\[([^\]\n]*)\]\(docItem:([^)#\s]+)(?:#page=(\d+))?\)/g;

// words are the export's texts in the page's language (t, i18n.mjs).
function words(t) {
  return { you: t('you'), agent: t('assistant'), sources: t('sources'), tools: t('exportTools'), noTools: t('exportNoTools'),
    round: t('exportRound'), page: t('exportPage'), failed: t('failed'), file: t('exportFile') };
}

// plain is Markdown inline markup made text: emphasis, code and links
// (a citation becomes its label and its number among the sources).
function plain(s, number) {
  return s.replace(citeRe, (_, label, id, page) => `${label || id} [${number(id, page)}]`)
    .replace(/\[([^\]\n]*)\]\((?:https?:|mailto:)[^)\s]*\)/g, '$1')
    .replace(/(\*\*|__)(.+?)\1/g, '$2').replace(/`([^`\n]+)`/g, '$1');
}

// blocks turns an answer's Markdown into outline blocks: headings, lists,
// tables, code and paragraphs; what is not one of these stays a paragraph,
// so no text is lost.
export function blocks(md, number) {
  const out = [];
  const lines = String(md || '').replace(/\r\n/g, '\n').split('\n');
  let para = [];
  const flush = () => { if (para.length) { const s = para.join('\n').trim(); if (s) out.push({ type: 'paragraph', text: plain(s, number) }); para = []; } };
  for (let i = 0; i < lines.length; i++) {
    const ln = lines[i];
    if (/^```/.test(ln)) {
      flush();
      const code = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]); i++) code.push(lines[i]);
      if (code.length) out.push({ type: 'paragraph', text: code.join('\n') });
      continue;
    }
    const h = /^(#{1,6})\s+(.*)$/.exec(ln);
    if (h) { flush(); out.push({ type: 'heading', level: Math.min(6, h[1].length + 2), text: plain(h[2], number) }); continue; }
    if (/^\s*\|.*\|\s*$/.test(ln)) {
      flush();
      const rows = [];
      for (; i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i]); i++) {
        if (/^\s*\|[\s:|-]+\|\s*$/.test(lines[i])) continue; // the header's rule
        rows.push(lines[i].trim().replace(/^\||\|$/g, '').split('|').map((c) => plain(c.trim(), number)));
      }
      i--;
      if (rows.length) out.push({ type: 'table', rows });
      continue;
    }
    const li = /^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$/.exec(ln);
    if (li) {
      flush();
      const ordered = !!li[2];
      const items = [];
      for (; i < lines.length; i++) {
        const m = /^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$/.exec(lines[i]);
        if (!m || !!m[2] !== ordered) break;
        items.push(plain(m[3], number));
      }
      i--;
      out.push({ type: 'list', ordered, items });
      continue;
    }
    if (ln.trim() === '') { flush(); continue; }
    para.push(ln);
  }
  flush();
  return out;
}

// oneLine shortens a tool's arguments to a line.
function oneLine(v, n = 160) {
  let s = typeof v === 'string' ? v : JSON.stringify(v ?? '');
  s = (s || '').replace(/\s+/g, ' ').trim();
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

// outline is the conversation c (conv.mjs's model, built from its events)
// as a document: name, then each prompt and answer of the branch shown,
// each answer followed by its sources (the documents it cites, with the
// page), and at the end the tool calls of those rounds. names maps file
// ids to file names (what the export could look up).
export function outline(c, name, t, names = {}) {
  const w = words(t);
  const out = { title: name, blocks: [] };
  const items = shown(c).map((x) => x.m).filter((m) => (m.role === 'user' || m.role === 'assistant') && !m.streaming && (m.content || '').trim());
  const rounds = new Set();
  for (const m of items) {
    // A round's tools belong to its answer: a prompt answered again in
    // another round shows only the tools of the answer shown.
    if (m.role === 'assistant') rounds.add(m.round);
    out.blocks.push({ type: 'heading', level: 2, text: m.role === 'user' ? w.you : w.agent });
    if (m.role === 'user') {
      for (const p of m.content.split(/\n\s*\n/)) if (p.trim()) out.blocks.push({ type: 'paragraph', text: p.trim() });
      continue;
    }
    // Sources are numbered in the order the answer cites them; a document
    // attached to the answer without a citation is listed too.
    const sources = [];
    const number = (id, page) => {
      const key = id + '#' + (page || '');
      let i = sources.findIndex((s) => s.key === key);
      if (i < 0) { sources.push({ key, id, page: page ? Number(page) : 0 }); i = sources.length - 1; }
      return i + 1;
    };
    out.blocks.push(...blocks(m.content, number));
    for (const d of m.documents || []) if (!sources.some((s) => s.id === d.fileId)) number(d.fileId, 0);
    if (sources.length) {
      out.blocks.push({ type: 'heading', level: 3, text: w.sources });
      out.blocks.push({ type: 'list', ordered: true, items: sources.map((s) => {
        const doc = (m.documents || []).find((d) => d.fileId === s.id);
        const label = names[s.id] || (doc && doc.name) || s.id;
        return `${label}${s.page ? `, ${w.page} ${s.page}` : ''} (${w.file} ${s.id})`;
      }) });
    }
  }
  const tools = (c.tools || []).filter((x) => rounds.has(x.round));
  out.blocks.push({ type: 'heading', level: 2, text: w.tools });
  if (!tools.length) out.blocks.push({ type: 'paragraph', text: w.noTools });
  else {
    out.blocks.push({ type: 'list', items: tools.map((x) => {
      const r = x.result || {};
      const how = x.result ? (r.ok === false ? `${w.failed}: ${oneLine(r.error || r.errorCode || '', 200)}` : 'ok') : '…';
      const ms = r.durationMs ? `, ${r.durationMs} ms` : '';
      return `${w.round} ${x.round}: ${x.tool} ${oneLine(x.args)}: ${how}${ms}`;
    }) });
  }
  return out;
}

// toMarkdown writes an outline as Markdown (as docgen writes it).
export function toMarkdown(o) {
  const esc = (s) => String(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');
  let md = o.title ? `# ${o.title}\n\n` : '';
  for (const b of o.blocks) {
    if (b.type === 'heading') md += `${'#'.repeat(b.level)} ${b.text}\n\n`;
    else if (b.type === 'paragraph') md += `${b.text}\n\n`;
    else if (b.type === 'list') md += b.items.map((it, i) => `${b.ordered ? `${i + 1}.` : '-'} ${it}`).join('\n') + '\n\n';
    else if (b.type === 'table') {
      const [head, ...rest] = b.rows;
      md += `| ${head.map(esc).join(' | ')} |\n|${head.map(() => '---').join('|')}|\n` + rest.map((r) => `| ${r.map(esc).join(' | ')} |\n`).join('') + '\n';
    }
  }
  return md;
}

// fileName is the export's file name: the conversation's, made safe.
export function fileName(name) {
  return (String(name || 'conversation').replace(/[\\/:*?"<>|\x00-\x1f]+/g, '_').trim().slice(0, 80) || 'conversation');
}

function download(href, name) {
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
}

// exportConversation downloads the conversation c as Markdown (written
// here) or PDF (written by the document plugin through the workspace's
// generateDocument tool, which keeps it in the workspace's files). It
// returns what the person is told: the PDF's name and the plugin's note
// (characters its fonts cannot show).
export async function exportConversation({ api, ws, c, name, t, format }) {
  // The cited files' names: a citation names only an id.
  const ids = new Set();
  for (const { m } of shown(c)) if (m.role === 'assistant') for (const x of (m.content || '').matchAll(citeRe)) ids.add(x[2]);
  const names = {};
  await Promise.all([...ids].map((id) => api('GET', `/files/${encodeURIComponent(id)}`).then((f) => { names[id] = f.name; }, () => {})));
  const o = outline(c, name, t, names);
  if (format === 'markdown') {
    const url = URL.createObjectURL(new Blob([toMarkdown(o)], { type: 'text/markdown' }));
    download(url, fileName(name) + '.md');
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    return { name: fileName(name) + '.md' };
  }
  const r = await api('POST', `/workspaces/${encodeURIComponent(ws)}/tools/generateDocument`, { format: 'pdf', fileName: fileName(name), title: o.title, blocks: o.blocks });
  if (!r || !r.ok) throw new Error((r && r.error && r.error.message) || t('exportFailed'));
  const d = r.data || {};
  download(`/api/v1/files/${encodeURIComponent(d.fileId)}/content`, d.name);
  return { name: d.name, fileId: d.fileId, note: d.note || '' };
}

// ExportBar offers both exports of the open conversation and says what
// came of the last one (the PDF's name, the plugin's note, an error).
export function ExportBar({ t, api, ws, wf, conv }) {
  const [msg, setMsg] = useState(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => setMsg(null), [wf]);
  if (!conv || !conv.messages.some((m) => !m.streaming)) return null;
  const run = async (format) => {
    setBusy(true); setMsg(null);
    try {
      const w = await api('GET', `/workflows/${encodeURIComponent(wf)}`);
      const r = await exportConversation({ api, ws, c: conv, name: w.name || wf, t, format });
      setMsg({ ok: true, text: t(format === 'pdf' ? 'exportedPdf' : 'exported').replace('{name}', r.name), note: r.note });
    } catch (e) { setMsg({ ok: false, text: e.message }); }
    setBusy(false);
  };
  return html`<div class="conv-export" role="group" aria-label=${t('exportConversation')}>
    <button type="button" data-testid="export-md" disabled=${busy} onClick=${() => run('markdown')}>${t('exportMarkdown')}</button>
    <button type="button" data-testid="export-pdf" disabled=${busy} onClick=${() => run('pdf')}>${t('exportPdf')}</button>
    ${busy && html`<span class="muted" role="status">${t('exporting')}</span>`}
    ${msg && html`<span class=${msg.ok ? 'muted' : 'error'} role=${msg.ok ? 'status' : 'alert'} data-testid="export-result">${msg.text}${msg.note && html` <span class="warn" data-testid="export-note">${msg.note}</span>`}</span>`}
  </div>`;
}
