// A small Markdown renderer that builds Preact nodes, never HTML strings:
// whatever a model writes ends up as text nodes, so no markup it sends can
// run or inject anything. It knows what answers use: paragraphs, headings,
// lists, fenced code, tables, emphasis, inline code, links, and citations.
// A link is kept only for http(s) and for a file reference, docItem:<id> or
// file:<id>, with an optional #page=N; a file reference becomes a button
// that opens the file's preview at that place (onCite).
import { h } from './preact.mjs';

const safeURL = /^https?:\/\//i;
const fileRef = /^(?:docItem|file):([A-Za-z0-9-]+)(?:#page=(\d+))?$/;

function inline(text, onCite, key = 0) {
  const out = [];
  // code, bold, emphasis, link: the first match wins, the rest recurses.
  const re = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\[([^\]]+)\]\(([^)\s]+)\)/;
  let rest = text;
  while (rest) {
    const m = re.exec(rest);
    if (!m) { out.push(rest); break; }
    if (m.index > 0) out.push(rest.slice(0, m.index));
    const k = key++;
    if (m[1] !== undefined) out.push(h('code', { key: k }, m[1]));
    else if (m[2] !== undefined) out.push(h('strong', { key: k }, inline(m[2], onCite, k * 100)));
    else if (m[3] !== undefined) out.push(h('em', { key: k }, inline(m[3], onCite, k * 100)));
    else {
      const label = m[4], href = m[5];
      const f = fileRef.exec(href);
      if (f) {
        const page = f[2] ? Number(f[2]) : 0;
        out.push(h('button', { key: k, type: 'button', class: 'cite', 'data-file': f[1], 'data-page': page || undefined,
          onClick: () => onCite && onCite(f[1], page) }, label));
      } else if (safeURL.test(href)) {
        out.push(h('a', { key: k, href, rel: 'noopener noreferrer', target: '_blank' }, label));
      } else {
        out.push(label);
      }
    }
    rest = rest.slice(m.index + m[0].length);
  }
  return out;
}

const isTableSep = (l) => /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(l);
const cells = (l) => l.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim());

export function markdown(src, onCite) {
  const lines = String(src || '').replace(/\r\n?/g, '\n').split('\n');
  const blocks = [];
  let i = 0, key = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^\s*$/.test(line)) { i++; continue; }
    const fence = /^\s*```\s*([\w+-]*)/.exec(line);
    if (fence) {
      const code = [];
      i++;
      while (i < lines.length && !/^\s*```/.test(lines[i])) code.push(lines[i++]);
      i++; // the closing fence (or the end: a streaming answer shows its code so far)
      blocks.push(h('pre', { key: key++, tabIndex: 0 }, h('code', { class: fence[1] ? 'lang-' + fence[1] : undefined }, code.join('\n'))));
      continue;
    }
    const head = /^(#{1,6})\s+(.*)$/.exec(line);
    if (head) {
      const level = Math.min(head[1].length + 2, 6); // answers' headings sit below the page's
      blocks.push(h('h' + level, { key: key++ }, inline(head[2], onCite)));
      i++;
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && isTableSep(lines[i + 1])) {
      const header = cells(line);
      i += 2;
      const rows = [];
      while (i < lines.length && lines[i].includes('|') && !/^\s*$/.test(lines[i])) rows.push(cells(lines[i++]));
      blocks.push(h('div', { key: key++, class: 'table-wrap' }, h('table', null,
        h('thead', null, h('tr', null, header.map((c, j) => h('th', { key: j, scope: 'col' }, inline(c, onCite))))),
        h('tbody', null, rows.map((r, ri) => h('tr', { key: ri }, r.map((c, j) => h('td', { key: j }, inline(c, onCite)))))))));
      continue;
    }
    const item = /^\s*([-*+]|\d+[.)])\s+(.*)$/;
    if (item.test(line)) {
      const ordered = /\d/.test(item.exec(line)[1]);
      const items = [];
      while (i < lines.length && item.test(lines[i])) items.push(item.exec(lines[i++])[2]);
      blocks.push(h(ordered ? 'ol' : 'ul', { key: key++ }, items.map((t, j) => h('li', { key: j }, inline(t, onCite)))));
      continue;
    }
    const para = [];
    while (i < lines.length && !/^\s*$/.test(lines[i]) && !/^\s*```/.test(lines[i]) && !/^#{1,6}\s/.test(lines[i]) && !item.test(lines[i])) {
      para.push(lines[i++]);
    }
    blocks.push(h('p', { key: key++ }, inline(para.join('\n'), onCite)));
  }
  return blocks;
}
