// The workspace UI in headless Chromium against a real `serve` (started by
// TestBrowser in cmd/agenthost, which passes the server and its fixtures in
// UI_* variables). Each step logs to stderr and leaves a screenshot in
// UI_ARTEFACTS. A failed check throws: the process exits non-zero.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { env, log, launch, context, newPage, steps } from './harness.mjs';

const base = env('UI_BASE'), token = env('UI_TOKEN'), ws = env('UI_WS');
const otherWS = env('UI_OTHER_WS'), otherWF = env('UI_OTHER_WF'), out = env('UI_ARTEFACTS'), pdfPath = env('UI_PDF');

// A fake microphone (a tone) and autoplay without a gesture, for voice.
const browser = await launch(['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', '--autoplay-policy=no-user-gesture-required']);
const ctx = await context(browser, { viewport: { width: 1400, height: 900 }, permissions: ['microphone'] });
const page = await newPage(ctx);
const cspViolations = [];
page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text()); });
// The Last-Event-ID of every event-stream request, to show resumes ask
// only for what the page has not seen.
const resumes = [];
page.on('request', (r) => { if (/\/events$/.test(r.url())) resumes.push(Number(r.headers()['last-event-id'] || 0)); });

// A failed step also logs what the page applied of its stream and what
// the stream holds.
const { step, axe, count } = steps(() => page, { onFail: async (name) => {
  log(`FAILED ${name}: applied ${await page.evaluate(() => JSON.stringify({ applied: window.__agenthost.applied, last: window.__agenthost.lastSeq }))}`);
  log(`FAILED ${name}: refetch ${await page.evaluate(async () => {
    const wf = location.pathname.split('/').pop();
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 1500);
    let txt = '';
    try {
      const r = await fetch('/api/v1/workflows/' + wf + '/events', { headers: { 'Last-Event-ID': '30' }, signal: ctl.signal });
      const rd = r.body.getReader();
      for (;;) { const { value, done } = await rd.read(); if (done) break; txt += new TextDecoder().decode(value); }
    } catch (e) { txt += ' [' + e.name + ']'; }
    return txt.slice(0, 1500);
  })}`);
} });

const ask = async (text) => {
  await page.fill('#chat-input', text);
  await page.press('#chat-input', 'Enter');
};
const assistantText = () => page.locator('.msg.assistant').last().innerText();
// Each area of the workspace has its place (docs/ui.md#layout): files and
// knowledge search in one, the chat in another.
const toArea = async (a, ready) => {
  if (await page.locator(ready).count() > 0) return;
  await page.click(`nav.areas a[data-area=${a}]`);
  await page.locator(ready).first().waitFor();
};
const toFiles = () => toArea('files', '[data-testid=dropzone]');
const toChat = () => toArea('chat', '#chat-input');

await step('sign-in-form', async () => {
  await page.goto(base + '/');
  await page.waitForSelector('#token');
  await axe('sign-in');
});

await step('signed-in', async () => {
  await page.fill('#token', 'ahk_wrong');
  await page.click('button[type=submit]');
  await page.waitForSelector('#signin-error');
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForURL(`${base}/w/${ws}`);
  await page.waitForSelector('.layout');
  // The session cookie is HttpOnly: script cannot read it.
  const cookies = await page.evaluate(() => document.cookie);
  assert.ok(!cookies.includes('agenthost_session'), 'document.cookie shows the session: ' + cookies);
  const [c] = (await ctx.cookies()).filter((c) => c.name === 'agenthost_session');
  assert.ok(c && c.httpOnly && c.sameSite === 'Strict', 'cookie attributes: ' + JSON.stringify(c));
});

await step('csp-blocks-inline-script', async () => {
  await page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.__inlineRan = true';
    document.head.appendChild(s);
  });
  await page.waitForTimeout(100);
  assert.equal(await page.evaluate(() => window.__inlineRan), undefined, 'an inline script ran');
  const csp = (await page.request.get(base + '/')).headers()['content-security-policy'];
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
});

let fileId = '';
// The conversation whose answer cites the manual.
let citingConv = '';
await step('pdf-dropped-and-indexed', async () => {
  await toFiles();
  const bytes = readFileSync(pdfPath).toString('base64');
  // A drop event with a real File, as a desktop drag would bring.
  const dt = await page.evaluateHandle((b64) => {
    const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const d = new DataTransfer();
    d.items.add(new File([bin], 'deb-camlidl-1.04.pdf', { type: 'application/pdf' }));
    return d;
  }, bytes);
  await page.dispatchEvent('[data-testid=dropzone]', 'dragover', { dataTransfer: dt });
  await page.dispatchEvent('[data-testid=dropzone]', 'drop', { dataTransfer: dt });
  const li = page.locator('.file-list li', { hasText: 'deb-camlidl-1.04.pdf' });
  await li.waitFor();
  fileId = await li.getAttribute('data-file');
  await li.locator('.idx[data-status=indexed]').waitFor({ timeout: 180000 });
});

await step('question-answered-tool-log', async () => {
  await toChat();
  // Every reading of the header's step count while the run goes, with the
  // activity panel's at the same moment: they count the same way, and the
  // header does not say "round N" beside the panel's "2 / 25".
  await page.evaluate(() => {
    window.__steps = [];
    window.__stepsSeen = new MutationObserver(() => {
      const head = document.querySelector('[data-testid=run-steps]'), panel = document.querySelector('[data-testid=panel-steps]');
      const state = document.querySelector('.run-state');
      window.__steps.push({ head: head ? head.textContent : '', panel: panel ? panel.textContent : '', state: state ? state.textContent : '' });
    });
    window.__stepsSeen.observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await ask('What does the manual say about interfaces?');
  await page.waitForURL(new RegExp(`/w/${ws}/c/`));
  citingConv = page.url().split('/').pop();
  await page.locator('.tool-log li[data-tool=searchKnowledge]').waitFor();
  await page.locator('[data-testid=run-status][data-status=completed]').waitFor({ timeout: 60000 });
  const text = await assistantText();
  assert.match(text, /interface attributes/);
  const readings = await page.evaluate(() => { window.__stepsSeen.disconnect(); return window.__steps; });
  const heads = readings.filter((r) => r.head);
  assert.ok(heads.length > 0, 'the header showed the step count while the answer streamed');
  for (const r of heads) assert.equal(r.head, r.panel, 'header and panel count the same: ' + JSON.stringify(r));
  assert.ok(heads.some((r) => /Steps: 1 \/ \d+/.test(r.head)), 'one step done before the answer: ' + JSON.stringify(heads.slice(0, 3)));
  assert.ok(!readings.some((r) => /\bround \d/.test(r.state)), 'the header says round N: ' + JSON.stringify(readings.find((r) => /round \d/.test(r.state))));
  assert.equal(await page.locator('.msg.assistant table td').count(), 4, 'the table is rendered');
  assert.equal(await page.locator('.msg.assistant pre code').count(), 1, 'the code block is rendered');
  await page.locator('.tool-log li[data-tool=searchKnowledge] summary').click();
  assert.match(await page.locator('.tool-log li[data-tool=searchKnowledge]').innerText(), /interface attributes/);
  await axe('conversation');
});

await step('citation-opens-page', async () => {
  const cite = page.locator(`.msg.assistant button.cite[data-file="${fileId}"]`);
  assert.equal(await cite.getAttribute('data-page'), '2');
  await cite.click();
  const pv = page.locator(`.preview[data-file="${fileId}"][data-page="2"]`);
  await pv.waitFor();
  // The page itself, drawn by pdf.js (preview.test.mjs checks the rest).
  await pv.locator('[data-testid=pdf-page][data-drawn="2"]').waitFor();
  assert.match(await pv.locator('h2').innerText(), /page 2/);
});

await step('knowledge-search-opens-page', async () => {
  await toFiles();
  await page.fill('#search-q', 'interface attributes');
  await page.press('#search-q', 'Enter');
  const hit = page.locator('.hits li button.cite').first();
  await hit.waitFor();
  const label = await hit.innerText();
  const m = /page (\d+)/.exec(label);
  assert.ok(m, 'the hit names its page: ' + label);
  await hit.click();
  await page.locator(`.preview[data-file="${fileId}"] [data-testid=pdf-page][data-drawn="${m[1]}"]`).waitFor();
  // Escape closes the preview (the focus is in the search field).
  await page.keyboard.press('Escape');
  await page.locator('.preview').waitFor({ state: 'detached' });
});

await step('archive-chosen-and-entries', async () => {
  // The keyboard path: the file chooser instead of a drop.
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.click('text=Choose files')]);
  await chooser.setFiles(env('UI_ZIP'));
  const li = page.locator('.file-list li', { hasText: path.basename(env('UI_ZIP')) });
  await li.locator('.idx[data-status=indexed]').waitFor({ timeout: 180000 });
  await li.locator('button', { hasText: 'Archive entries' }).click();
  await li.locator('.entries li').first().waitFor();
  assert.ok(await li.locator('.entries li').count() >= 2, 'the archive lists its entries');
  // A search hit inside the archive names its entry, not only the archive.
  await page.fill('#search-q', 'ingestion corpus bundle');
  await page.press('#search-q', 'Enter');
  const entry = page.locator('.hits li button.cite [data-testid=hit-entry]').first();
  await entry.waitFor();
  assert.match(await entry.innerText(), /README\.txt|\.(pdf|docx|xlsx|pptx)/);
});

await step('encrypted-file-opened-with-its-password', async () => {
  // Issue 26 item 5: an encrypted archive says it needs its password, a
  // wrong one says so and loses nothing, the right one indexes it.
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.click('text=Choose files')]);
  await chooser.setFiles(env('UI_ENCRYPTED'));
  const li = page.locator('.file-list li', { hasText: path.basename(env('UI_ENCRYPTED')) });
  await li.locator('.idx[data-status=encrypted]').waitFor({ timeout: 180000 });
  await li.locator('input[type=password]').fill('not-it');
  await li.locator('.file-password button').click();
  await li.locator('.file-password [role=alert]').waitFor();
  await li.locator('.idx[data-status=encrypted]').waitFor();
  await li.locator('input[type=password]').fill('12345678');
  await li.locator('.file-password button').click();
  await li.locator('.idx[data-status=indexed]').waitFor({ timeout: 60000 });
});

await step('folder-made-and-filled', async () => {
  await page.fill('#new-folder', 'Manuals');
  await page.press('#new-folder', 'Enter');
  await page.locator('#folder-pick option', { hasText: 'Manuals' }).waitFor({ state: 'attached' });
  await page.waitForFunction(() => document.querySelector('#folder-pick').selectedOptions[0].text === 'Manuals');
  assert.equal(await page.locator('.file-list li').count(), 0, 'the new folder is empty');
  assert.match(await page.locator('[data-testid=files-empty]').innerText(), /folder is empty/);
  // The new folder is the upload target, and the page says so.
  assert.match(await page.locator('[data-testid=upload-target]').innerText(), /Uploads go to: Manuals/);
  await page.fill('#upload-tags', 'manual, v1');
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.click('text=Choose files')]);
  await chooser.setFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('Release notes: interfaces are stable.') });
  const li = page.locator('.file-list li', { hasText: 'notes.txt' });
  await li.locator('.idx[data-status=indexed]').waitFor({ timeout: 60000 });
  assert.deepEqual(await li.locator('.tag').allInnerTexts(), ['manual', 'v1']);
  // The tags were for that batch: the field is empty for the next one.
  assert.equal(await page.inputValue('#upload-tags'), '');
  await page.selectOption('#folder-pick', '');
  await page.locator(`.file-list li[data-file="${fileId}"]`).waitFor();
  assert.match(await page.locator('[data-testid=upload-target]').innerText(), /Uploads go to: No folder/);
});

await step('failed-file-says-why', async () => {
  // A type no extractor reads fails, and the list says why instead of a
  // bare "failed".
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.click('text=Choose files')]);
  await chooser.setFiles({ name: 'blob.bin', mimeType: 'application/octet-stream', buffer: Buffer.from([0, 1, 2, 3, 254, 255, 0, 7]) });
  const li = page.locator('.file-list li', { hasText: 'blob.bin' });
  await li.locator('.idx[data-status=failed]').waitFor({ timeout: 60000 });
  const reason = await li.locator('[data-testid=index-error]').innerText();
  assert.ok(reason.length > 10, 'the failure has a reason: ' + reason);
});

await step('file-details-uploader-and-citations', async () => {
  // The manual's details name who uploaded it (not a user id) and link
  // the conversation whose answer cites it, which the link opens.
  await page.locator(`.file-list li[data-file="${fileId}"] [data-testid=file-details]`).first().click();
  const fd = page.locator(`[data-testid=file-detail][data-file="${fileId}"]`);
  const who = await fd.locator('[data-testid=fd-uploader]').innerText();
  assert.match(who, /^by (Ada|ada@acme\.example)/i, 'the uploader by name: ' + who);
  const link = fd.locator(`[data-testid=fd-cited] a[data-conv="${citingConv}"]`);
  await link.waitFor();
  assert.equal(await fd.locator('[data-testid=fd-cited] a').count(), 1, 'one conversation cites the manual');
  await axe('file-details-cited');
  await page.screenshot({ path: path.join(out, 'file-details-cited.png') });
  await link.click();
  await page.waitForURL(`${base}/w/${ws}/c/${citingConv}`);
  await page.locator('.msg.assistant', { hasText: 'interface attributes' }).waitFor();
  await page.keyboard.press('Escape');
  await fd.waitFor({ state: 'detached' });
  await toFiles();
});

await step('file-details-and-actions', async () => {
  // The failed file's details say why; it is deleted after a confirmation.
  let li = page.locator('.file-list li', { hasText: 'blob.bin' });
  await li.locator('[data-testid=file-details]').click();
  const fd = page.locator('[data-testid=file-detail]');
  await fd.locator('[data-testid=fd-status][data-status=failed]').waitFor();
  assert.match(await fd.locator('[data-testid=fd-error]').innerText(), /extractor/);
  await axe('file-details');
  await fd.locator('[data-testid=fd-delete]').click();
  await fd.locator('[data-testid=fd-delete-confirm]').click();
  await fd.waitFor({ state: 'detached' });
  await li.waitFor({ state: 'detached' });
  // notes.txt is renamed, tagged and moved out of its folder.
  li = page.locator('.file-list li', { hasText: 'notes.txt' });
  await li.locator('[data-testid=file-details]').click();
  await fd.locator('[data-testid=fd-status][data-status=indexed]').waitFor();
  await fd.locator('#fd-name').fill('release-notes.txt');
  await fd.locator('button', { hasText: 'Rename' }).click();
  await page.locator('.file-list li', { hasText: 'release-notes.txt' }).waitFor();
  await fd.locator('#fd-tag').fill('stable');
  await fd.locator('#fd-tag').press('Enter');
  await page.locator('.file-list li', { hasText: 'release-notes.txt' }).locator('.tag', { hasText: 'stable' }).waitFor();
  await fd.locator('#fd-folder').selectOption('');
  await page.waitForFunction(() => document.querySelector('#fd-folder').value === '');
  const href = await fd.locator('a', { hasText: 'Download' }).getAttribute('href');
  const body = await page.evaluate(async (u) => (await fetch(u)).text(), href);
  assert.match(body, /interfaces are stable/);
  await page.keyboard.press('Escape');
  await fd.waitFor({ state: 'detached' });
});

await step('file-details-unread-pages', async () => {
  // A scanned page (no text layer, no OCR model here) is listed among the
  // pages not fully read, with why; its button opens the page itself.
  const name = path.basename(env('UI_SCANNED'));
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.click('text=Choose files')]);
  await chooser.setFiles(env('UI_SCANNED'));
  const li = page.locator('.file-list li[data-file]', { hasText: name });
  await li.locator('.idx[data-status=indexed]').waitFor({ timeout: 180000 });
  await li.locator('[data-testid=file-details]').click();
  const fd = page.locator(`[data-testid=file-detail][data-file="${await li.getAttribute('data-file')}"]`);
  const unread = fd.locator('[data-testid=fd-unread]');
  await unread.waitFor();
  assert.match(await unread.locator('summary').innerText(), /Pages not fully read: 1$/);
  await unread.locator('summary').click();
  assert.match(await unread.locator('li').innerText(), /Page 1\s+image only/i);
  await axe('file-details-unread');
  await unread.locator('li button').click();
  await page.locator(`.preview[data-page="1"] [data-testid=pdf-page][data-drawn="1"]`).waitFor();
  await page.keyboard.press('Escape');
  await page.locator('.preview').waitFor({ state: 'detached' });
  if (await fd.count() === 0) await li.locator('[data-testid=file-details]').click();
  await fd.locator('[data-testid=fd-delete]').click();
  await fd.locator('[data-testid=fd-delete-confirm]').click();
  await li.waitFor({ state: 'detached' });
});

await step('files-filtered-sorted-and-bulk', async () => {
  // Two throwaway files, filtered by a tag, tagged together, then deleted
  // together.
  await page.fill('#upload-tags', 'scratch');
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.click('text=Choose files')]);
  await chooser.setFiles([{ name: 'a-scratch.txt', mimeType: 'text/plain', buffer: Buffer.from('first scratch') },
    { name: 'b-scratch.txt', mimeType: 'text/plain', buffer: Buffer.from('second scratch') }]);
  await page.locator('.file-list li', { hasText: 'b-scratch.txt' }).locator('.idx[data-status=indexed]').waitFor({ timeout: 60000 });
  await page.fill('#file-filter', 'scratch');
  await page.waitForFunction(() => document.querySelectorAll('.file-list li[data-file]').length === 2);
  // Uploaded today: none is older than 30 days.
  await page.selectOption('#file-date', 'older');
  await page.waitForFunction(() => document.querySelectorAll('.file-list li[data-file]').length === 0);
  await page.selectOption('#file-date', 'today');
  await page.waitForFunction(() => document.querySelectorAll('.file-list li[data-file]').length === 2);
  await page.selectOption('#file-date', '');
  await page.selectOption('#file-sort', 'name');
  assert.deepEqual(await page.locator('.file-list li[data-file] button.file').allInnerTexts(), ['a-scratch.txt', 'b-scratch.txt']);
  await page.selectOption('#file-sort', 'newest');
  for (const li of await page.locator('.file-list li[data-file] input.pick').all()) await li.check();
  await page.locator('[data-testid=bulk]').waitFor();
  await page.fill('#bulk-tag', 'bulk-tagged');
  await page.press('#bulk-tag', 'Enter');
  await page.waitForFunction(() => [...document.querySelectorAll('.file-list li[data-file]')].every((li) => li.innerText.includes('bulk-tagged')));
  await axe('files-bulk');
  // Both moved into the Manuals folder at once.
  const ids = await page.locator('.file-list li[data-file]').evaluateAll((lis) => lis.map((li) => li.dataset.file));
  for (const li of await page.locator('.file-list li[data-file] input.pick').all()) await li.check();
  await page.selectOption('#bulk-move', { label: 'Manuals' });
  await page.locator('[data-testid=bulk]').waitFor({ state: 'detached' });
  const folderOf = () => page.evaluate((xs) => Promise.all(xs.map(async (id) => (await (await fetch('/api/v1/files/' + id)).json()).folderId || '')), ids);
  const manuals = await page.locator('#bulk-move option, #folder-pick option', { hasText: 'Manuals' }).first().getAttribute('value');
  await page.waitForFunction(async ([xs, want]) => (await Promise.all(xs.map(async (id) => (await (await fetch('/api/v1/files/' + id)).json()).folderId))).every((f) => f === want), [ids, manuals]);
  assert.deepEqual(await folderOf(), [manuals, manuals], 'both files are in Manuals');
  await page.waitForFunction(() => document.querySelectorAll('.file-list li[data-file]').length === 2);
  for (const li of await page.locator('.file-list li[data-file] input.pick').all()) await li.check();
  await page.click('[data-testid=bulk-delete]');
  await page.click('[data-testid=bulk-delete-confirm]');
  await page.waitForFunction(() => document.querySelectorAll('.file-list li[data-file]').length === 0);
  await page.fill('#file-filter', '');
  await page.locator('.file-list li', { hasText: 'release-notes.txt' }).waitFor();
});

await step('run-stopped', async () => {
  await toChat();
  await ask('Tell me slowly about everything.');
  await page.locator('.msg.assistant.streaming').last().waitFor();
  await page.click('button.stop');
  await page.locator('[data-testid=run-status][data-status=stopped]').waitFor();
  assert.equal(await page.locator('button.stop').count(), 0);
});

await step('run-failed', async () => {
  await page.click('button.new');
  await ask('Now please fail.');
  await page.locator('[data-testid=run-status][data-status=failed]').waitFor({ timeout: 60000 });
  // The error is shown once: in the answer, which also says what it means.
  await page.locator('.msg.assistant', { hasText: 'refuses this request' }).waitFor();
  const text = await page.locator('main').innerText();
  assert.equal(text.split('refuses this request').length - 1, 1, 'the model error is shown once:\n' + text);
  assert.match(text, /answered with an error|refused the request/);
});

await step('run-failed-http-500', async () => {
  // A provider that answered HTTP 500 was reached: the answer says it
  // answered with an error, once, and not that it could not be reached.
  await page.click('button.new');
  await ask('Break the provider, please.');
  await page.locator('[data-testid=run-status][data-status=failed]').waitFor();
  await page.locator('.msg.assistant', { hasText: 'scripted provider broke down' }).waitFor();
  const text = await page.locator('main').innerText();
  assert.equal(text.split('scripted provider broke down').length - 1, 1, 'the model error is shown once:\n' + text);
  assert.match(text, /answered with an error/);
  assert.doesNotMatch(text, /could not be reached/);
});

await step('edit-proposal-accepted', async () => {
  await page.click('button.new');
  // A mark the page keeps until it is loaded again.
  await page.evaluate(() => { window.__sameLoad = true; });
  await ask('Write a note, then propose an edit of it.');
  const card = page.locator('[data-testid=proposal]');
  await card.waitFor({ timeout: 60000 });
  const diff = await card.locator('.diff').innerText();
  assert.match(diff, /-status: draft/);
  assert.match(diff, /\+status: final/);
  await page.locator('[data-testid=run-status][data-status=completed]').waitFor({ timeout: 60000 });
  await card.locator('[data-testid=proposal-accept]').click();
  await page.locator('[data-testid=proposal][data-status=accepted]').waitFor();
  assert.equal(await card.locator('[data-testid=proposal-accept]').count(), 0);
  await axe('proposal');
});

await step('agent-file-listed-without-reload', async () => {
  // The note the agent wrote in that conversation is in the files list
  // without a reload: the stream's fileCreated asked for the list again.
  await toFiles();
  await page.locator('.file-list li[data-file]', { hasText: 'ui-note.md' }).waitFor();
  assert.equal(await page.evaluate(() => window.__sameLoad), true, 'the page was not loaded again');
  await page.goBack();
  await page.locator('[data-testid=proposal][data-status=accepted]').waitFor();
});

// A call whose policy is ask (tagFile here, set by the workspace's admin;
// by default every tool with an external side effect) waits for the person: the card shows
// the tool, the model's reason and its arguments; an edit is checked
// against the tool's schema, and a denial's reason reaches the model.
await step('approval-denied', async () => {
  await page.click('button.new');
  await ask('Tag the manual as final.');
  const card = page.locator('[data-testid=approval][data-status=pending]');
  await card.waitFor({ timeout: 60000 });
  assert.match(await card.innerText(), /tagFile/);
  assert.match(await card.innerText(), /I will tag the manual as final\./);
  assert.match(await card.locator('.args').innerText(), /docItem:manual/);
  await axe('approval');
  await card.locator('[data-testid=approval-edit]').click();
  await card.locator('[data-testid=approval-args]').fill('{"add":["final"]}');
  await card.locator('[data-testid=approval-approve-edited]').click();
  await card.locator('.error[role=alert]').waitFor();
  assert.match(await card.locator('.error').innerText(), /arguments/i, 'edited arguments that miss required fields are refused');
  await card.locator('text=Cancel').click();
  await card.locator('[data-testid=approval-deny]').click();
  await card.locator('[data-testid=approval-reason]').fill('the manual is not final yet');
  await card.locator('[data-testid=approval-deny-confirm]').click();
  await page.locator('[data-testid=approval][data-status=denied]').waitFor();
  await page.locator('[data-testid=run-status][data-status=completed]').waitFor({ timeout: 60000 });
  assert.match(await assistantText(), /a person denied this call: the manual is not final yet/);
});

// Approved with edited arguments: the call runs with the person's
// arguments (the manual PDF, a tag of their choice), not the model's.
await step('approval-edited-approved', async () => {
  await page.click('button.new');
  await ask('Tag the manual as final, please.');
  const card = page.locator('[data-testid=approval][data-status=pending]');
  await card.waitFor({ timeout: 60000 });
  await card.locator('[data-testid=approval-edit]').click();
  await card.locator('[data-testid=approval-args]').fill(JSON.stringify({ file: fileId, add: ['reviewed'] }));
  await card.locator('[data-testid=approval-approve-edited]').click();
  await page.locator('[data-testid=approval][data-status=approved]').waitFor();
  await page.locator('[data-testid=run-status][data-status=completed]').waitFor({ timeout: 60000 });
  const answer = await assistantText();
  assert.match(answer, /Tag result: Tagged:/, answer);
  assert.match(answer, /reviewed/, answer);
  assert.match(await page.locator('[data-testid=approval] .args').innerText(), /reviewed/, 'the card shows the arguments that ran');
});

const everyWordOnce = async () => {
  await page.locator('[data-testid=run-status][data-status=completed]').waitFor({ timeout: 60000 });
  const text = await assistantText();
  const words = text.match(/w\d\d/g);
  assert.deepEqual(words, Array.from({ length: 60 }, (_, i) => 'w' + String(i + 1).padStart(2, '0')), 'every word once, in order: ' + text);
  assert.equal(await page.locator('.msg.user').count(), 1);
  assert.equal(await page.locator('.msg.assistant').count(), 1);
};

// A message's actions: copy; a sent prompt edited and sent again is a new
// branch beside it (the model sees the edit, not the replaced prompt);
// moving back shows the first branch whole; regenerating an answer makes
// a second answer to the same prompt; feedback with a note is kept and
// comes back after a reload (from the event stream).
await step('message-branches-and-feedback', async () => {
  await page.click('button.new');
  await ask('Remember the colour blue.');
  await page.locator('[data-testid=run-status][data-status=completed]').waitFor({ timeout: 60000 });
  assert.match(await assistantText(), /blue/);
  const userMsg = page.locator('.msg.user').last();
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  await userMsg.locator('[data-testid=copy]').click();
  await userMsg.locator('[role=status]', { hasText: 'Copied' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'Remember the colour blue.');
  await userMsg.locator('[data-testid=edit]').click();
  await page.locator('#edit-prompt-text').fill('Remember the colour red.');
  await axe('message-edit');
  await page.locator('[data-testid=edit-send]').click();
  await page.locator('.msg.assistant', { hasText: 'red' }).waitFor({ timeout: 60000 });
  await page.locator('[data-testid=run-status][data-status=completed]').waitFor({ timeout: 60000 });
  assert.equal(await page.locator('.msg.user').count(), 1, 'the edit replaces the prompt in the shown branch');
  assert.equal(await page.locator('.msg.user [data-testid=branches] span').innerText(), '2 of 2');
  assert.doesNotMatch(await page.locator('.messages').innerText(), /blue/, 'the first branch is not shown');
  await page.locator('.msg.user [data-testid=branches] button').first().click();
  await page.locator('.msg.user', { hasText: 'blue' }).waitFor();
  assert.match(await assistantText(), /blue/, 'the first branch shows its own answer');
  assert.equal(await page.locator('.msg.user [data-testid=branches] span').innerText(), '1 of 2');

  await page.locator('.msg.assistant').last().locator('[data-testid=regenerate]').click();
  await page.locator('.msg.assistant [data-testid=branches] span', { hasText: '2 of 2' }).waitFor({ timeout: 60000 });
  await page.locator('[data-testid=run-status][data-status=completed]').waitFor({ timeout: 60000 });
  assert.equal(await page.locator('.msg.assistant').count(), 1, 'one answer shown at a time');
  assert.match(await assistantText(), /blue/, 'the regenerated answer answers the same prompt');

  const answer = page.locator('.msg.assistant').last();
  await answer.locator('[data-testid=unhelpful]').click();
  await answer.locator('[data-testid=feedback-note]').fill('too short');
  await answer.locator('[data-testid=feedback-send]').click();
  await answer.locator('[data-testid=feedback-shown]', { hasText: 'too short' }).waitFor();
  await axe('message-actions');
  await page.reload();
  await page.locator('.msg.assistant [data-testid=feedback-shown]', { hasText: 'too short' }).waitFor({ timeout: 30000 });
  assert.equal(await page.locator('.msg.assistant [data-testid=unhelpful]').getAttribute('aria-pressed'), 'true');
  assert.equal(await page.locator('.msg.user [data-testid=branches] span').innerText(), '1 of 2', 'the selected branch survives a reload');
  // Shared with the workspace (read only for its other members: the
  // store's conformance suite checks who reads and who may change it).
  const wfId = new URL(page.url()).pathname.split('/').pop();
  const row = page.locator(`[data-conv="${wfId}"]`);
  await row.locator('.conv-more').click();
  await row.locator('[data-testid=conv-share]').click();
  await row.locator('[data-testid=conv-shared]').waitFor();
  const w = await page.evaluate(async (id) => (await fetch('/api/v1/workflows/' + id)).json(), wfId);
  assert.equal(w.shared, true);
});

await step('conversation-titled', async () => {
  // A new conversation is named after its first exchange by the title
  // model (docs/agent.md#conversation-titles): the list shows the title,
  // not the prompt, once the answer is complete, with no reload.
  await toChat();
  await page.click('button.new');
  await ask('Which rules apply to travel expenses in the budget?');
  await page.locator('[data-testid=run-status][data-status=completed]').waitFor({ timeout: 60000 });
  const wfId = new URL(page.url()).pathname.split('/').pop();
  const row = page.locator(`[data-conv="${wfId}"]`);
  await row.filter({ hasText: 'Travel expense rules' }).waitFor({ timeout: 30000 });
  assert.doesNotMatch(await row.innerText(), /Which rules apply/);
});

await step('conversations-managed', async () => {
  const item = (text) => page.locator('.conv-list li', { hasText: text });
  const actions = async (text) => { await item(text).locator('button.conv-more').click(); return item(text).locator('.conv-actions'); };
  // Renamed.
  let acts = await actions('Now please fail.');
  await acts.locator('button', { hasText: 'Rename' }).click();
  await page.locator('.conv-rename input').fill('Failing on purpose');
  await page.locator('.conv-rename input').press('Enter');
  await item('Failing on purpose').waitFor();
  // Pinned: first in the list.
  acts = await actions('What does the manual');
  await acts.locator('button', { hasText: 'Pin' }).click();
  await page.waitForFunction(() => /What does the manual/.test(document.querySelector('.conv-list li').innerText));
  assert.match(await page.locator('.conv-list li').first().innerText(), /pinned/);
  // Found by the text of an answer, not only by its name.
  await page.fill('#conv-q', 'interface attributes');
  await page.waitForFunction(() => document.querySelectorAll('.conv-list li').length === 1);
  assert.match(await page.locator('.conv-list li').first().innerText(), /What does the manual/);
  await page.fill('#conv-q', 'no conversation says this');
  await page.locator('.convs .muted', { hasText: 'No conversation matches' }).waitFor();
  await page.fill('#conv-q', '');
  // Archived: out of the list, in the archive, and back.
  acts = await actions('Failing on purpose');
  await acts.locator('button', { hasText: 'Archive' }).click();
  await item('Failing on purpose').waitFor({ state: 'detached' });
  await page.check('.conv-archived input');
  await item('Failing on purpose').waitFor();
  acts = await actions('Failing on purpose');
  await acts.locator('button', { hasText: 'Unarchive' }).click();
  await item('Failing on purpose').waitFor({ state: 'detached' });
  await page.uncheck('.conv-archived input');
  await item('Failing on purpose').waitFor();
  // Exported as Markdown.
  acts = await actions('What does the manual');
  const [download] = await Promise.all([page.waitForEvent('download'), acts.locator('button', { hasText: 'Export' }).click()]);
  const md = readFileSync(await download.path(), 'utf8');
  assert.match(md, /^# What does the manual/);
  assert.match(md, /## You\n\nWhat does the manual say about interfaces\?/);
  assert.match(md, /## Agent\n\nThe manual describes/);
  await axe('conversations-managed');
  // Deleted after a confirmation.
  acts = await actions('Failing on purpose');
  await acts.locator('button', { hasText: 'Delete' }).click();
  await acts.locator('[data-testid=conv-delete-confirm]').click();
  await item('Failing on purpose').waitFor({ state: 'detached' });
});

await step('network-drop-resumes', async () => {
  await page.click('button.new');
  await ask('Answer slowly after a drop.');
  await page.waitForURL(new RegExp(`/w/${ws}/c/`));
  await page.waitForFunction(() => (document.querySelector('.msg.assistant')?.innerText || '').includes('w05'));
  // Offline first, so the reconnects fail for a while; then the stream's
  // connection is cut (Chromium's offline mode leaves open streams alone).
  await ctx.setOffline(true);
  await page.evaluate(() => window.__agenthost.dropStream());
  await page.locator('.run-state .warn', { hasText: 'reconnecting' }).waitFor();
  await page.screenshot({ path: path.join(out, 'network-drop-offline.png') });
  await page.waitForTimeout(1500);
  const before = resumes.length;
  await ctx.setOffline(false);
  await everyWordOnce();
  const after = resumes.slice(before);
  assert.ok(after.length > 0 && after[after.length - 1] > 0, 'the reconnect resumes with Last-Event-ID: ' + after);
});

await step('reload-mid-run-no-duplicates', async () => {
  await page.click('button.new');
  await ask('Answer slowly please.');
  await page.waitForURL(new RegExp(`/w/${ws}/c/`));
  await page.waitForFunction(() => (document.querySelector('.msg.assistant')?.innerText || '').includes('w05'));
  const before = resumes.length;
  await page.reload();
  await everyWordOnce();
  // After a reload the page knows nothing: it reads from the start, and
  // applies each event once.
  assert.equal(resumes[before], 0);
});

await step('at-file', async () => {
  await page.fill('#chat-input', 'Summarise @deb');
  await page.press('#chat-input', 'End');
  await page.type('#chat-input', '-');
  await page.press('#chat-input', 'Backspace');
  await page.locator('#mention-list [role=option]').first().waitFor();
  await page.press('#chat-input', 'Enter');
  assert.match(await page.inputValue('#chat-input'), /@deb-camlidl-1\.04\.pdf /);
  assert.match(await page.locator('.attached').innerText(), /deb-camlidl-1\.04\.pdf/);
  await page.press('#chat-input', 'Enter');
  await page.locator('.msg.user', { hasText: '@deb-camlidl-1.04.pdf' }).waitFor();
  await page.locator(`.msg.user .docs button.cite`).last().waitFor();
});

await step('voice', async () => {
  await page.click('button.new');
  await page.click('button.voice-toggle');
  assert.equal(await page.getAttribute('button.voice-toggle', 'aria-pressed'), 'true');
  await page.click('button.mic');
  await page.locator('button.mic[aria-pressed=true]').waitFor();
  await page.waitForTimeout(700);
  await page.click('button.mic');
  // The recording is transcribed by the server and, voice being on, sent.
  await page.locator('.msg.user', { hasText: 'Tell me about voice' }).waitFor();
  const answer = page.locator('.msg.assistant', { hasText: 'Noted: Tell me about voice' });
  await answer.waitFor();
  await answer.locator('audio[data-testid=voice-audio]').waitFor();
  assert.match(await answer.locator('audio').getAttribute('src'), /^blob:/);
  // Voice stays on for this conversation after a reload; a replay is not spoken again.
  await page.reload();
  await page.locator('.msg.assistant', { hasText: 'Noted: Tell me about voice' }).waitFor();
  assert.equal(await page.getAttribute('button.voice-toggle', 'aria-pressed'), 'true');
  assert.equal(await page.locator('audio[data-testid=voice-audio]').count(), 0);
  await page.click('button.voice-toggle');
});

await step('german', async () => {
  await page.selectOption('#lang', 'de');
  await page.locator('button.new', { hasText: 'Neue Unterhaltung' }).waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'de');
  await page.reload();
  await page.locator('h2', { hasText: 'Unterhaltungen' }).waitFor();
  await axe('conversation (German)');
});

await step('other-tenant-not-found', async () => {
  await page.selectOption('#lang', 'en');
  for (const p of [`/w/${otherWS}`, `/w/${ws}/c/${otherWF}`, `/w/${otherWS}/c/${otherWF}`]) {
    await page.goto(base + p);
    await page.locator('[data-view=notfound]').waitFor();
    assert.ok(!(await page.content()).includes('hello from the other tenant'));
  }
  await axe('not found');
});

await step('organisation-switcher', async () => {
  await page.goto(`${base}/w/${ws}`);
  await page.click('button.add-org');
  await page.fill('#token', env('UI_OTHER_TOKEN'));
  await page.click('button[type=submit]');
  await page.waitForURL(`${base}/w/${otherWS}`);
  // Now the other tenant's conversation is the user's to see.
  await page.locator('.conv-list li', { hasText: 'hello from the other tenant' }).waitFor();
  assert.match(await page.locator('#org').evaluate((s) => s.selectedOptions[0].text), /^Other/);
  await page.selectOption('#org', { label: 'Acme (ada@acme.example)' });
  await page.waitForURL(`${base}/w/${ws}`);
  await page.locator('.conv-list li', { hasText: 'What does the manual' }).waitFor();
  assert.equal(await page.locator('.conv-list li', { hasText: 'hello from the other tenant' }).count(), 0);
  await page.goto(`${base}/w/${otherWS}`);
  await page.locator('[data-view=notfound]').waitFor();
});

await step('narrow-window', async () => {
  await page.setViewportSize({ width: 420, height: 860 });
  await page.goto(`${base}/w/${ws}`);
  await page.waitForSelector('#chat-input');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, 'horizontal overflow of ' + overflow + 'px');
});

await step('phone-composer-on-screen', async () => {
  // On a 390 px phone the composer stays on screen in a long conversation:
  // after it opens (scrolled to the newest message, which is not behind
  // the composer) and scrolled back to the top.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${base}/w/${ws}/c/${citingConv}`);
  await page.locator('.msg.assistant', { hasText: 'interface attributes' }).waitFor();
  await page.locator('#chat-input').waitFor();
  const onScreen = async (when) => {
    const b = await page.locator('form.composer').boundingBox();
    assert.ok(b && b.y >= 0 && b.y + b.height <= 844 + 1, `${when}: the composer is off screen: ${JSON.stringify(b)}`);
    return b;
  };
  // Longer than the screen, or the check would show nothing.
  assert.ok(await page.evaluate(() => document.documentElement.scrollHeight > window.innerHeight + 100), 'the conversation fits the screen');
  const b = await onScreen('opened');
  const last = await page.locator('.msg.assistant').last().boundingBox();
  assert.ok(last.y < b.y, 'the newest answer is visible above the composer');
  await page.evaluate(() => window.scrollTo(0, 0));
  await onScreen('scrolled to the top');
  await axe('phone conversation');
});

await step('keyboard-only', async () => {
  await page.setViewportSize({ width: 1400, height: 900 });
  await page.goto(`${base}/w/${ws}`);
  await page.waitForSelector('#chat-input');
  // Tab from the top reaches the chat input, and Enter sends.
  let reached = false;
  for (let i = 0; i < 60 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement?.id === 'chat-input');
  }
  assert.ok(reached, 'the chat input is reachable by Tab');
  await page.keyboard.type('Hello by keyboard');
  await page.keyboard.press('Enter');
  await page.locator('.msg.assistant', { hasText: 'Noted: Hello by keyboard' }).waitFor();
});

await step('signed-out', async () => {
  await page.click('text=Sign out');
  await page.waitForSelector('#token');
  const r = await page.request.get(base + '/api/v1/session');
  assert.equal(r.status(), 401);
});

await step('session-ended-elsewhere', async () => {
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForSelector('.layout');
  // Another tab signs out: this page's next request finds no session and
  // shows the sign-in form rather than a broken workspace.
  await page.request.delete(base + '/api/v1/session', { headers: { 'X-CSRF-Token': await page.evaluate(async () => (await (await fetch('/api/v1/session')).json()).csrf), Origin: base } });
  // The page's next request (a search here, unless a background one came
  // first) is refused, and the page shows the sign-in form.
  const quick = { timeout: 3000 };
  await page.click('nav.areas a[data-area=files]', quick).catch(() => {});
  await page.fill('#search-q', 'anything', quick).catch(() => {});
  await page.press('#search-q', 'Enter', quick).catch(() => {});
  await page.waitForSelector('#token');
});

assert.deepEqual(cspViolations.filter((v) => !/__inlineRan/.test(v) && !/inline/.test(v)), [], 'unexpected CSP violations');
await browser.close();
log(`all ${count()} steps passed; screenshots in ${out}`);
