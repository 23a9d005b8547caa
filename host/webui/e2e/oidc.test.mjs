// The whole path of a person invited into an organisation that signs in
// with its identity provider, in headless Chromium (started by
// TestBrowserOIDC in cmd/agenthost, with a real OpenID provider in the
// test process): the sign-in page offers the provider; the invitation
// link leads through the provider's login page and back, signed in; a
// conversation with the scripted model; signing out at the provider ends
// the session here (back-channel logout); signing in again and signing out
// here signs out at the provider too (RP-initiated logout). Screenshots go
// to UI_ARTEFACTS; a failed check throws, so the process exits non-zero.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { axeCheck } from './harness.mjs';
import path from 'node:path';

const env = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
const base = env('UI_BASE'), invite = env('UI_INVITE_URL'), idp = env('UI_IDP'), out = env('UI_ARTEFACTS');
const user = env('UI_IDP_USER'), password = env('UI_IDP_PASSWORD');
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

const browser = await chromium.launch({ executablePath: env('UI_CHROMIUM'), args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const page = await (await browser.newContext({ viewport: { width: 1200, height: 800 }, locale: 'en-US' })).newPage();
page.setDefaultTimeout(120000); // how long a check may take to fail on a busy machine, not a speed requirement
page.on('pageerror', (e) => { throw new Error('page error: ' + e.message); });

async function step(name, f) {
  await f();
  await page.screenshot({ path: path.join(out, `oidc-${name}.png`) });
  log(`ok ${name}`);
}
// axe-core in the light and the dark theme (harness.mjs).
const axe = (view) => axeCheck(page, view);
async function loginAtProvider() {
  await page.waitForURL((u) => u.href.startsWith(idp + '/login'));
  await page.getByLabel('Username').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}
async function sessionStatus() {
  return page.evaluate(async () => (await fetch('/api/v1/session', { credentials: 'same-origin' })).status);
}

try {
  await step('sign-in-page-offers-the-provider', async () => {
    await page.goto(base + '/');
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor();
    await axe('sign-in with providers');
  });
  await step('invitation-through-the-provider', async () => {
    await page.goto(invite);
    // With passkeys on too, the invitation offers both ways in.
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await loginAtProvider();
    await page.locator('header .tenant', { hasText: 'Acme' }).waitFor();
    assert.equal(await sessionStatus(), 200);
  });
  await step('conversation', async () => {
    await page.waitForURL(/\/w\/[0-9a-f-]+/);
    await page.waitForSelector('#chat-input');
    await page.fill('#chat-input', 'Hello from single sign-on');
    await page.keyboard.press('Enter');
    await page.locator('.msg.assistant', { hasText: 'Noted: Hello from single sign-on' }).waitFor();
  });
  await step('the-link-works-once', async () => {
    const p2 = await browser.newPage();
    const r = await p2.goto(invite);
    assert.equal(r.status(), 410);
    await p2.close();
  });
  await step('sign-out-at-the-provider-ends-the-session', async () => {
    const p2 = await page.context().newPage();
    await p2.goto(idp + '/portal/signout');
    await p2.getByLabel('Username').fill(user);
    await p2.getByRole('button', { name: 'Sign out everywhere' }).click();
    await p2.locator('#done').waitFor();
    await p2.close();
    assert.equal(await sessionStatus(), 401);
    await page.reload();
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor();
  });
  await step('signed-in-again-with-the-button', async () => {
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await loginAtProvider();
    await page.locator('header .tenant', { hasText: 'Acme' }).waitFor();
    // The conversation is still there.
    await page.getByText('Hello from single sign-on').first().waitFor();
  });
  await step('sign-out-here-signs-out-at-the-provider', async () => {
    await page.click('text=Sign out');
    await page.waitForURL(base + '/');
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor();
    assert.equal(await sessionStatus(), 401);
  });
} catch (e) {
  await page.screenshot({ path: path.join(out, 'oidc-failed.png') }).catch(() => {});
  log('page text:\n' + await page.locator('body').innerText().catch(() => ''));
  throw e;
} finally {
  await browser.close();
}
