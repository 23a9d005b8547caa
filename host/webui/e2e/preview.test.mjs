// The preview in headless Chromium against a real `serve` (started by
// TestBrowserPreview in cmd/agenthost, which uploads the files and passes
// their ids in UI_PV_FILES). A citation in a multi-page PDF opens its page
// drawn with the passage marked, from byte ranges only; office documents
// show their structure, an image itself, an archive its tree; on a phone
// the preview is a full-screen sheet. A failed check throws.
import assert from 'node:assert/strict';
import path from 'node:path';
import { env, log, launch, context, newPage, signInContext, steps, axeCheck } from './harness.mjs';

const base = env('UI_BASE'), token = env('UI_TOKEN'), ws = env('UI_WS'), out = env('UI_ARTEFACTS');
const files = Object.fromEntries(env('UI_PV_FILES').split(' ').map((kv) => kv.split('=')));
const browser = await launch();

async function open(viewport) {
  const ctx = await context(browser, { viewport });
  await signInContext(ctx, base, token);
  const page = await newPage(ctx);
  const csp = [];
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) csp.push(m.text()); });
  // Every response of a file's content route: its status, Range and length.
  const content = [], modules = [];
  page.on('request', (r) => { const m = /\/assets\/([^/?]+\.mjs)$/.exec(r.url()); if (m) modules.push(m[1]); });
  page.on('response', (r) => {
    const m = /\/api\/v1\/files\/([^/]+)\/(content|pages\/(\d+)\/pdf)$/.exec(new URL(r.url()).pathname);
    if (m) content.push({ file: m[1], page: m[3] ? Number(m[3]) : 0, status: r.status(), range: r.request().headers().range || '', length: Number(r.headers()['content-length'] || 0) });
  });
  await page.goto(`${base}/w/${ws}`);
  await page.waitForSelector('#chat-input');
  return { ctx, page, csp, content, modules };
}

// A step names the page it runs on: the script opens a wide and a phone one.
let current = null;
const harness = steps(() => current);
const step = (page, name, f) => { current = page; return harness.step(name, f); };
const axe = (page, view) => axeCheck(page, view);

// inked counts the canvas's pixels that are not white: a drawn page has
// text on it.
const inked = (page) => page.locator('[data-testid=pdf-page] canvas').evaluate((c) => {
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let k = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) k++;
  return k;
});

const desk = await open({ width: 1400, height: 900 });
const { page } = desk;
const pdf = files.UI_PV_PDF, pdfSize = Number(files.UI_PV_PDF_SIZE);
let citedPage = 0, convURL = '';

await step(page, 'pdf-citation-drawn-and-marked', async () => {
  // The preview and pdf.js are no part of the first view.
  assert.deepEqual(desk.modules.filter((m) => /^(preview|pdf)/.test(m)), [], 'loaded before any preview: ' + desk.modules.join(' '));
  await page.fill('#chat-input', 'Find and cite: Recording in VCS standard Git branches upstream tarball');
  await page.press('#chat-input', 'Enter');
  await page.locator('[data-testid=run-status][data-status=completed]').waitFor();
  convURL = page.url();
  const cite = page.locator(`.msg.assistant button.cite[data-file="${pdf}"]`);
  citedPage = Number(await cite.getAttribute('data-page'));
  assert.ok(citedPage > 1, 'the citation names a page past the first: ' + citedPage);
  await cite.click();
  const pv = page.locator(`.preview[data-file="${pdf}"][data-kind=pdf]`);
  await pv.locator(`[data-testid=pdf-page][data-page="${citedPage}"][data-drawn="${citedPage}"]`).waitFor();
  assert.ok(await inked(page) > 1000, 'the page is drawn on the canvas');
  const marks = Number(await pv.locator('[data-testid=pdf-page]').getAttribute('data-marks'));
  assert.ok(marks > 0, 'the cited passage is marked on the page');
  assert.equal(await pv.locator('mark.hl').count(), marks);
  // The marks lie on the page, inside the canvas.
  const cb = await pv.locator('canvas').boundingBox();
  const mb = await pv.locator('mark.hl').first().boundingBox();
  assert.ok(mb.x >= cb.x - 1 && mb.y >= cb.y - 1 && mb.x + mb.width <= cb.x + cb.width + 1 && mb.y + mb.height <= cb.y + cb.height + 2, 'a mark inside the page');
  assert.match(await pv.locator('[data-testid=passage]').innerText(), /VCS|Git/i);
  // The page's text lies over the canvas (pdf.js's text layer), in
  // place: selected, it is the page's own text.
  await pv.locator(`[data-testid=text-layer][data-page="${citedPage}"]`).waitFor({ state: 'attached' });
  const run = pv.locator('[data-testid=text-layer] span', { hasText: /Git/ }).first();
  const rb = await run.boundingBox();
  assert.ok(rb && rb.x >= cb.x - 1 && rb.y >= cb.y - 1 && rb.x + rb.width <= cb.x + cb.width + 1 && rb.y + rb.height <= cb.y + cb.height + 2, 'a run of text inside the page: ' + JSON.stringify(rb));
  const selected = await page.evaluate(() => {
    const sel = getSelection();
    sel.selectAllChildren(document.querySelector('[data-testid=text-layer]'));
    const text = sel.toString();
    sel.removeAllRanges();
    return text;
  });
  assert.match(selected, /VCS/, 'the text layer selects as the page\'s text');
  // The cited page came as a copy of its own, one request, a part of
  // the file's bytes; the file itself was not read.
  const reqs = desk.content.filter((r) => r.file === pdf);
  const bytes = reqs.reduce((s, r) => s + r.length, 0);
  log(`  pdf: ${reqs.length} requests, ${bytes} of ${pdfSize} bytes for page ${citedPage}: ${reqs.map((r) => r.page ? 'page ' + r.page : r.range.slice(6)).join(' ')}`);
  assert.deepEqual(reqs.map((r) => [r.page, r.status]), [[citedPage, 200]], 'one copy of the cited page: ' + JSON.stringify(reqs));
  assert.ok(bytes < pdfSize / 2, `page ${citedPage} cost ${bytes} of the file's ${pdfSize} bytes`);
  assert.deepEqual(desk.modules.filter((m) => /^(preview|pdf)/.test(m)).sort(), ['pdf.min.mjs', 'pdf.worker.min.mjs', 'preview.mjs'], 'loaded for the preview');
  await axe(page, 'pdf preview');
});

await step(page, 'pdf-navigation-zoom-escape', async () => {
  const pv = page.locator('.preview[data-kind=pdf]');
  await pv.locator('[data-testid=next-page]').click();
  await pv.locator(`[data-testid=pdf-page][data-drawn="${citedPage + 1}"]`).waitFor();
  assert.ok(await inked(page) > 1000, 'the next page is drawn');
  await pv.locator('[data-testid=page-input]').fill('1');
  await pv.locator('[data-testid=page-input]').press('Enter');
  await pv.locator('[data-testid=pdf-page][data-drawn="1"]').waitFor();
  const w0 = (await pv.locator('canvas').boundingBox()).width;
  const z0 = await pv.locator('[data-testid=zoom]').innerText();
  await pv.locator('[data-testid=zoom-in]').click();
  await page.waitForFunction((z) => document.querySelector('[data-testid=zoom]').textContent !== z, z0);
  await pv.locator('[data-testid=pdf-page][data-drawn="1"]').waitFor();
  const w1 = (await pv.locator('canvas').boundingBox()).width;
  assert.ok(w1 > w0 * 1.2, `zoomed in: ${w0} → ${w1}`);
  await pv.locator('[data-testid=zoom-out]').click();
  await page.waitForFunction((z) => document.querySelector('[data-testid=zoom]').textContent === z, z0);
  await pv.locator('[data-testid=pdf-page][data-drawn="1"]').waitFor();
  await page.keyboard.press('Escape');
  await page.locator('.preview').waitFor({ state: 'detached' });
});

// openListed opens a file's preview from the file list.
async function openListed(p, id) {
  // The file list is in the files area (docs/ui.md#layout).
  if (await p.locator('.file-list').count() === 0) await p.click('nav.areas a[data-area=files]');
  await p.locator(`.file-list li[data-file="${id}"] button.file`).click();
  return p.locator(`.preview[data-file="${id}"]`);
}

await step(page, 'docx-table', async () => {
  const pv = await openListed(page, files.UI_PV_DOCX);
  await pv.locator('[data-testid=doc-structure]').waitFor();
  assert.equal(await pv.getAttribute('data-kind'), 'structure');
  assert.ok(await pv.locator('table :is(th, td)', { hasText: 'Row 1, Column 1' }).count() >= 1, 'the table is a table: ' + await pv.innerText());
  assert.ok(await pv.locator('p.doc-p', { hasText: 'paragraph before the table' }).count() === 1, 'paragraphs are paragraphs');
  assert.equal(await pv.locator('pre').count(), 0, 'no text dump');
  await axe(page, 'docx preview');
});

await step(page, 'odt-heading', async () => {
  const pv = await openListed(page, files.UI_PV_ODT);
  await pv.locator('[data-testid=doc-structure]').waitFor();
  assert.ok(await pv.locator('.doc-h').count() >= 1, 'the heading is a heading: ' + await pv.innerText());
});

await step(page, 'pptx-slides-notes', async () => {
  const pv = await openListed(page, files.UI_PV_PPTX);
  await pv.locator('[data-testid=doc-structure]').waitFor();
  assert.ok(await pv.locator('section.slide[data-slide="1"]').count() === 1, 'slide 1 is a slide: ' + await pv.innerText());
  assert.match(await pv.locator('section.slide[data-slide="1"] [data-testid=slide-notes]').innerText(), /Notes/);
  await axe(page, 'pptx preview');
});

await step(page, 'image', async () => {
  const pv = await openListed(page, files.UI_PV_PNG);
  const img = pv.locator('[data-testid=preview-image]');
  await img.waitFor();
  await page.waitForFunction(() => { const i = document.querySelector('[data-testid=preview-image]'); return i && i.complete && i.naturalWidth > 0; });
  assert.equal(await img.evaluate((i) => `${i.naturalWidth}x${i.naturalHeight}`), '64x48');
});

await step(page, 'encrypted-pdf-by-ranges', async () => {
  // A PDF the host does not copy page by page (encrypted, with an empty
  // user password: pdf.js opens it) is read by ranges of the file.
  const before = desk.content.length;
  const pv = await openListed(page, files.UI_PV_LOCKED);
  await pv.locator('[data-testid=pdf-page][data-drawn="1"]').waitFor();
  // Its page holds two short lines of small text.
  assert.ok(await inked(page) > 50, 'the page is drawn');
  const reqs = desk.content.slice(before).filter((r) => r.file === files.UI_PV_LOCKED);
  assert.deepEqual(reqs.filter((r) => r.page).map((r) => r.status), [422], 'the copy refused: ' + JSON.stringify(reqs));
  const ranges = reqs.filter((r) => !r.page);
  assert.ok(ranges.length > 0 && ranges.every((r) => r.status === 206 && /^bytes=\d+-\d+$/.test(r.range)), 'then ranges of the file: ' + JSON.stringify(reqs));
  await page.keyboard.press('Escape');
  await page.locator('.preview').waitFor({ state: 'detached' });
});

await step(page, 'archive-tree', async () => {
  const pv = await openListed(page, files.UI_PV_ZIP);
  const treeEl = pv.locator('[data-testid=archive-tree]');
  await treeEl.waitFor();
  assert.ok(await treeEl.locator('li[data-entry]').count() >= 3, 'entries listed');
  assert.ok(await treeEl.locator('li > ul > li').count() >= 1, 'folders hold their entries');
  await axe(page, 'archive preview');
});
assert.deepEqual(desk.csp, [], 'no CSP violation');
await desk.ctx.close();

// A phone: the citation opens as a sheet over the whole screen.
const phone = await open({ width: 390, height: 844 });
await step(phone.page, 'phone-sheet', async () => {
  const p = phone.page;
  await p.goto(convURL);
  const cite = p.locator(`.msg.assistant button.cite[data-file="${pdf}"]`).first();
  await cite.click();
  const pv = p.locator(`.preview[data-file="${pdf}"]`);
  await pv.locator(`[data-testid=pdf-page][data-drawn="${citedPage}"]`).waitFor();
  const b = await pv.boundingBox();
  assert.deepEqual([b.x, b.y, b.width, b.height].map(Math.round), [0, 0, 390, 844], 'the preview covers the screen');
  const c = await pv.locator('canvas').boundingBox();
  assert.ok(c.width <= 390, 'the page fits the phone: ' + c.width);
  assert.ok(await pv.locator('.close').evaluate((e) => e === document.activeElement), 'the sheet has the focus');
  await axe(p, 'phone preview');
  await p.screenshot({ path: path.join(out, 'phone-sheet-open.png') });
  await p.keyboard.press('Escape');
  await pv.waitFor({ state: 'detached' });
});
await browser.close();
