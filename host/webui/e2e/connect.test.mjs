// An OAuth connection made in headless Chromium, as a person makes it:
// signed in to the workspace UI, the browser goes to the provider's consent
// page (another site: localhost, where the UI is 127.0.0.1), and the
// provider's link brings it back to the callback. The session cookie is
// SameSite=Strict, so that cross-site navigation carries none: the callback
// answers a page that reloads it from this site, and then lands in the UI
// with the outcome shown and no code or state left in the address. Started
// by TestBrowserOAuthReturn in cmd/agenthost (UI_* variables).
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { axeCheck } from './harness.mjs';
import path from 'node:path';

const env = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
const base = env('UI_BASE'), token = env('UI_TOKEN'), out = env('UI_ARTEFACTS');
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

const browser = await chromium.launch({ executablePath: env('UI_CHROMIUM'),
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
const ctx = await browser.newContext({ viewport: { width: 1200, height: 800 }, locale: 'en-US' });
const page = await ctx.newPage();
// A wait is how long the test may take to fail, not a speed requirement.
page.setDefaultTimeout(120000);
page.on('pageerror', (e) => { throw new Error('page error: ' + e.message); });
// Every answer of the callback, and whether its request carried the session.
const callbacks = [];
page.on('response', async (r) => {
  if (!r.url().includes('/connections/callback')) return;
  const cookie = (await r.request().allHeaders()).cookie || '';
  callbacks.push(`${r.status()}${cookie.includes('agenthost_session=') ? '+cookie' : ''}`);
});

let n = 0;
async function step(name, f) {
  try { await f(); } catch (e) {
    await page.screenshot({ path: path.join(out, `connect-failed-${name}.png`) }).catch(() => {});
    log(`FAILED ${name} at ${page.url()}: callbacks ${callbacks.join(' ')}\n${await page.locator('body').innerText().catch(() => '')}`);
    throw e;
  }
  n++;
  const file = path.join(out, `connect-${String(n).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file });
  log(`ok ${n} ${name} ${file}`);
}

// startGrant asks the API for the provider's URL as the UI's page would
// (the session's CSRF token, this origin) and goes there.
async function startGrant(label) {
  const url = await page.evaluate(async (label) => {
    const s = await (await fetch('/api/v1/session')).json();
    const r = await fetch('/api/v1/connections/authorize', { method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': s.csrf }, body: JSON.stringify({ provider: 'acme', label }) });
    if (r.status !== 200) throw new Error('authorize: ' + r.status + ' ' + await r.text());
    return (await r.json()).authorizationUrl;
  }, label);
  assert.match(url, /^http:\/\/localhost:\d+\/authorize\?/);
  await page.goto(url);
  await page.waitForSelector('#allow');
}

await step('signed-in', async () => {
  await page.goto(base + '/');
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForURL(new RegExp(`^${base}/w/`));
});

await step('consent-allowed-back-in-ui', async () => {
  await startGrant('acme in the browser');
  callbacks.length = 0;
  await page.click('#allow');
  const notice = page.locator('[data-view=connection-notice]');
  await notice.waitFor();
  assert.match(await notice.innerText(), /Connected.*\(acme\)/);
  assert.equal(await notice.getAttribute('role'), 'status');
  // Back in the Connections view, nothing of the grant in the address.
  await page.waitForURL(`${base}/connections`);
  // The return from the provider's site came without the cookie, and the
  // page's reload from this site with it.
  assert.deepEqual(callbacks, ['200', '303+cookie'], 'callback answers: ' + callbacks.join(' '));
  const list = await page.evaluate(async () => (await fetch('/api/v1/connections')).json());
  assert.deepEqual(list.map((c) => [c.label, c.provider, c.auth]), [['acme in the browser', 'acme', 'oauth2']]);
  await axeCheck(page, 'connection notice', '[data-view=connection-notice]');
});

await step('notice-dismissed', async () => {
  await page.click('[data-view=connection-notice] button');
  await page.locator('[data-view=connection-notice]').waitFor({ state: 'detached' });
});

await step('consent-denied-back-in-ui', async () => {
  await startGrant('refused');
  callbacks.length = 0;
  await page.click('#deny');
  const notice = page.locator('[data-view=connection-notice]');
  await notice.waitFor();
  assert.match(await notice.innerText(), /not made: Access was not granted/);
  assert.equal(await notice.getAttribute('role'), 'alert');
  await page.waitForURL(`${base}/connections`);
  const list = await page.evaluate(async () => (await fetch('/api/v1/connections')).json());
  assert.equal(list.length, 1, 'a refused grant stored a connection');
});

await browser.close();
log(`callbacks ${callbacks.join(' ')}`);
