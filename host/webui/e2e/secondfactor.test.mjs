// A passkey as second factor in headless Chromium with the DevTools
// protocol's virtual authenticator, against a real serve process
// (TestBrowserSecondFactor in cmd/agenthost): the admin turns the setting
// on in People; a token sign-in is then pending: the admin, who has no
// passkey, registers one and confirms with it, and reaches the workspace;
// the next token sign-in asks for the passkey again. A program's bearer
// token is unaffected. axe-core on the new view. Screenshots go to
// UI_ARTEFACTS.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { axeCheck } from './harness.mjs';
import path from 'node:path';

const env = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
const base = env('UI_BASE'), token = env('UI_TOKEN'), out = env('UI_ARTEFACTS'), email = env('UI_EMAIL');
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

const browser = await chromium.launch({ executablePath: env('UI_CHROMIUM'), args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const context = await browser.newContext({ viewport: { width: 1200, height: 800 }, locale: 'en-US' });
const page = await context.newPage();
page.setDefaultTimeout(120000);
page.on('pageerror', (e) => { throw new Error('page error: ' + e.message); });
const cdp = await context.newCDPSession(page);
await cdp.send('WebAuthn.enable');
const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', { options: {
  protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true,
  automaticPresenceSimulation: true } });

async function step(name, f) {
  await f();
  await page.screenshot({ path: path.join(out, `secondfactor-${name}.png`) });
  log(`ok: ${name}`);
}
// axe-core in the light and the dark theme (harness.mjs).
const axe = (view) => axeCheck(page, view);
const signedIn = () => page.locator('header .user', { hasText: email }).waitFor();
const tokenSignIn = async () => {
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
};
const signOut = async () => {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).first().waitFor();
};
const status = async (p) => page.evaluate(async (u) => (await fetch(u, { credentials: 'same-origin' })).status, base + p);

try {
  await step('turn the setting on', async () => {
    await page.goto(base + '/');
    await tokenSignIn();
    await signedIn();
    await page.getByRole('link', { name: 'People' }).click();
    const box = page.locator('#second-factor-required');
    await box.waitFor();
    assert.equal(await box.isChecked(), false, 'off by default');
    await box.check();
    await page.waitForFunction(async () => (await (await fetch('/api/v1/tenant/second-factor')).json()).passkeyRequired === true);
    await signOut();
  });
  await step('token sign-in asks to register a passkey', async () => {
    await tokenSignIn();
    await page.getByRole('heading', { name: 'Confirm with a passkey' }).waitFor();
    assert.equal(await page.locator('header .user').count(), 0, 'nothing of the workspace is shown');
    assert.equal(await status('/api/v1/workspaces'), 401, 'the pending session is refused');
    await axe('second-factor');
    await page.getByLabel('Passkey name').fill('laptop');
    await page.locator('#second-factor-go').click();
    await page.getByRole('button', { name: 'Confirm with a passkey' }).waitFor();
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    assert.equal(credentials.length, 1, 'the passkey was registered');
    assert.equal(await status('/api/v1/workspaces'), 401, 'registering is not the second factor');
  });
  await step('the assertion opens the workspace', async () => {
    await page.locator('#second-factor-go').click();
    await signedIn();
    assert.equal(await status('/api/v1/workspaces'), 200);
  });
  await step('the next token sign-in asks for the passkey', async () => {
    await signOut();
    await tokenSignIn();
    await page.getByRole('button', { name: 'Confirm with a passkey' }).waitFor();
    await page.locator('#second-factor-go').click();
    await signedIn();
  });
  await step('cancel signs out', async () => {
    await signOut();
    await tokenSignIn();
    await page.locator('#second-factor-cancel').click();
    await page.getByRole('heading', { name: 'Sign in' }).first().waitFor();
    assert.equal(await status('/api/v1/session/second-factor'), 401, 'the pending session ended');
  });
  await step('bearer tokens are unaffected', async () => {
    const r = await fetch(base + '/api/v1/workspaces', { headers: { Authorization: 'Bearer ' + token } });
    assert.equal(r.status, 200);
  });
} catch (e) {
  await page.screenshot({ path: path.join(out, 'secondfactor-failed.png') }).catch(() => {});
  log('page text:\n' + await page.locator('body').innerText().catch(() => ''));
  throw e;
} finally {
  await browser.close();
}
