// A person's preferences in headless Chromium against a real `serve` whose
// agent chain is gpt-4o-mini, gpt-4o (started by TestBrowserPreferences in
// cmd/agenthost, which checks afterwards which model the scripted server
// was asked for). A failed check throws: the process exits non-zero.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const env = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
const base = env('UI_BASE'), token = env('UI_TOKEN'), ws = env('UI_WS'), out = env('UI_ARTEFACTS'), pdfPath = env('UI_PDF');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

const browser = await chromium.launch({ executablePath: env('UI_CHROMIUM'),
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
// The system's scheme is light: the dark theme must come from the
// person's choice, not from the media query.
const ctx = await browser.newContext({ viewport: { width: 1300, height: 900 }, locale: 'en-US', colorScheme: 'light' });
const page = await ctx.newPage();
page.setDefaultTimeout(60000);
page.on('pageerror', (e) => { throw new Error('page error: ' + e.message); });

let n = 0;
async function step(name, f) {
  try {
    await f();
  } catch (e) {
    await page.screenshot({ path: path.join(out, `failed-${name}.png`) }).catch(() => {});
    log(`FAILED ${name}: page text:\n${await page.locator('body').innerText().catch(() => '')}`);
    throw e;
  }
  n++;
  await page.screenshot({ path: path.join(out, `${String(n).padStart(2, '0')}-${name}.png`) });
  log(`ok ${n} ${name}`);
}

async function axe(view) {
  await page.evaluate(axeSource);
  const r = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  for (const v of r.violations) log(`  axe ${view}: ${v.impact} ${v.id} (${v.nodes.length}) ${v.nodes.slice(0, 3).map((x) => x.target.join(' ') + ' ' + (x.failureSummary || '').replace(/\s+/g, ' ').slice(0, 160)).join(' | ')}`);
  assert.equal(bad.length, 0, `axe found serious/critical violations on ${view}: ${bad.map((v) => v.id).join(', ')}`);
}

const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
const instructions = 'Always end with the word PINEAPPLE.';

await step('signed-in', async () => {
  await page.goto(base + '/');
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForURL(`${base}/w/${ws}`);
  assert.equal(await background(), 'rgb(255, 255, 255)', 'the light theme at first');
});

await step('settings-saved', async () => {
  await page.goto(base + '/settings');
  await page.locator('#pref-save').waitFor();
  await page.waitForFunction(() => document.querySelectorAll('#pref-model option').length >= 3);
  await page.check('#pref-theme-dark');
  await page.fill('#pref-instructions', instructions);
  await page.selectOption('#pref-model', 'openai/gpt-4o');
  await page.click('#pref-save');
  await page.locator('#pref-saved').waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  assert.equal(await background(), 'rgb(13, 17, 23)');
});

await step('kept-after-reload', async () => {
  // Another browser profile's copy of the theme is gone: the server's
  // preferences bring it back.
  await page.evaluate(() => localStorage.removeItem('agenthost.theme'));
  await page.reload();
  await page.locator('#pref-save').waitFor();
  await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
  assert.equal(await page.isChecked('#pref-theme-dark'), true);
  assert.equal(await page.inputValue('#pref-instructions'), instructions);
  assert.equal(await page.inputValue('#pref-model'), 'openai/gpt-4o');
  await axe('settings (dark)');
  // This browser's copy opens the page dark before the server answers.
  assert.equal(await page.evaluate(() => localStorage.getItem('agenthost.theme')), 'dark');
});

await step('conversation-uses-them', async () => {
  await page.goto(`${base}/w/${ws}`);
  await page.locator('#model-picker').waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  await page.waitForFunction(() => document.querySelector('#model-picker').value === 'openai/gpt-4o');
  await axe('workspace: chat and files (dark)');
  await page.fill('#chat-input', 'Do you have my instructions?');
  await page.press('#chat-input', 'Enter');
  await page.waitForURL(new RegExp(`/w/${ws}/c/`));
  await page.locator('.msg.assistant', { hasText: 'Your instructions: ' + instructions }).waitFor();
  await axe('conversation (dark)');
});

await step('files-dark', async () => {
  // A file in the list and its details, in the dark theme.
  const bytes = readFileSync(pdfPath).toString('base64');
  const dt = await page.evaluateHandle((b64) => {
    const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const d = new DataTransfer();
    d.items.add(new File([bin], 'deb-camlidl-1.04.pdf', { type: 'application/pdf' }));
    return d;
  }, bytes);
  // Files have their own area (docs/ui.md#layout).
  if (await page.locator('[data-testid=dropzone]').count() === 0) await page.click('nav.areas a[data-area=files]');
  await page.locator('[data-testid=dropzone]').waitFor();
  await page.dispatchEvent('[data-testid=dropzone]', 'dragover', { dataTransfer: dt });
  await page.dispatchEvent('[data-testid=dropzone]', 'drop', { dataTransfer: dt });
  const li = page.locator('.file-list li', { hasText: 'deb-camlidl-1.04.pdf' });
  await li.waitFor();
  await axe('files with a file (dark)');
  await li.locator('[data-testid=file-details]').click();
  await page.locator('[data-testid=file-detail]').waitFor();
  await axe('file details (dark)');
});

await step('other-views-dark', async () => {
  for (const p of ['/people', '/admin', '/connections']) {
    await page.goto(base + p);
    await page.locator('main#main').waitFor();
    await page.waitForLoadState('networkidle');
    await axe(p + ' (dark)');
  }
});

await step('system-theme-follows-the-system', async () => {
  await page.goto(base + '/settings');
  await page.locator('#pref-save').waitFor();
  await page.check('#pref-theme-system');
  await page.click('#pref-save');
  await page.locator('#pref-saved').waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), undefined);
  assert.equal(await background(), 'rgb(255, 255, 255)');
  await page.emulateMedia({ colorScheme: 'dark' });
  assert.equal(await background(), 'rgb(13, 17, 23)');
  await axe('settings (system dark)');
});

await browser.close();
