// A person's preferences in headless Chromium against a real `serve` whose
// agent chain is gpt-4o-mini, gpt-4o (started by TestBrowserPreferences in
// cmd/agenthost, which checks afterwards which model the scripted server
// was asked for). A failed check throws: the process exits non-zero.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { env, launch, context, newPage, steps } from './harness.mjs';

const base = env('UI_BASE'), token = env('UI_TOKEN'), ws = env('UI_WS'), pdfPath = env('UI_PDF');

const browser = await launch();
// The system's scheme is light: the dark theme must come from the
// person's choice, not from the media query.
const ctx = await context(browser);
const page = await newPage(ctx);
const { step, axe } = steps(() => page);

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
