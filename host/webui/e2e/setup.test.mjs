// A fresh server's first start in headless Chromium (started by
// TestBrowserFirstRun in cmd/agenthost): the sign-in page says where the
// setup link is, the link's page creates the organisation and its admin,
// shows the API token once and opens the workspace. Screenshots go to
// UI_ARTEFACTS; a failed check throws, so the process exits non-zero.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { axeCheck } from './harness.mjs';
import path from 'node:path';

const env = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
const base = env('UI_BASE'), link = env('UI_SETUP_URL'), out = env('UI_ARTEFACTS');
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

const browser = await chromium.launch({ executablePath: env('UI_CHROMIUM'), args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const page = await (await browser.newContext({ viewport: { width: 1200, height: 800 }, locale: 'en-US' })).newPage();
page.setDefaultTimeout(120000); // how long a check may take to fail on a busy machine, not a speed requirement
page.on('pageerror', (e) => { throw new Error('page error: ' + e.message); });

async function step(name, f) {
  await f();
  await page.screenshot({ path: path.join(out, `setup-${name}.png`) });
  log(`ok ${name}`);
}
// axe-core in the light and the dark theme (harness.mjs).
const axe = (view) => axeCheck(page, view);

try {
  await step('sign-in-says-where-the-link-is', async () => {
    await page.goto(base + '/');
    await page.getByRole('status').filter({ hasText: 'setup link' }).waitFor();
  });
  await step('setup-form', async () => {
    await page.goto(link);
    await page.getByRole('heading', { name: 'Set up agenthost' }).waitFor();
    // The secret left the address bar (and the history) at once.
    assert.ok(!page.url().includes('setup='), `the address still holds the link: ${page.url()}`);
    await axe('setup');
  });
  await step('a wrong e-mail address is refused by the form', async () => {
    await page.getByLabel('Organisation').fill('Acme');
    await page.getByLabel('Your e-mail address').fill('ada');
    await page.getByRole('button', { name: 'Create the organisation' }).click();
    assert.equal(await page.locator('[data-view="setup-done"]').count(), 0);
  });
  await step('token-shown-once', async () => {
    await page.getByLabel('Your e-mail address').fill('ada@acme.example');
    await page.getByLabel('Your name').fill('Ada Admin');
    await page.getByRole('button', { name: 'Create the organisation' }).click();
    await page.getByRole('heading', { name: 'Your organisation is ready' }).waitFor();
    assert.match(await page.getByLabel('API token').inputValue(), /^ahk_[A-Za-z0-9_-]{43}$/);
    await axe('setup-done');
  });
  await step('workspace', async () => {
    await page.getByRole('button', { name: 'Continue to the workspace' }).click();
    await page.locator('header .tenant', { hasText: 'Acme' }).waitFor();
    await page.waitForURL(/\/w\/[0-9a-f-]+$/);
  });
  await step('the link works once', async () => {
    const p2 = await page.context().browser().newPage();
    await p2.goto(link);
    await p2.getByRole('status').filter({ hasText: 'set up already' }).waitFor();
    await p2.close();
  });
} catch (e) {
  await page.screenshot({ path: path.join(out, 'setup-failed.png') }).catch(() => {});
  log('page text:\n' + await page.locator('body').innerText().catch(() => ''));
  throw e;
} finally {
  await browser.close();
}
