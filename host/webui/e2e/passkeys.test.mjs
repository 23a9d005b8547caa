// Passkeys in headless Chromium with the DevTools protocol's virtual
// authenticator (CTAP2, resident keys, user verification), against a real
// serve process (TestBrowserPasskeys in cmd/agenthost): register a passkey
// in Settings, sign out and sign in with it (discoverable and by e-mail), a
// second passkey on another authenticator, revoke one and see its sign-in
// refused while the other still works; an invited person registers a
// passkey from the invitation link and is signed in; the admin sees them
// in People and deactivates them, which ends their session at once. axe-core
// on the new views. Screenshots go to UI_ARTEFACTS.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { axeCheck } from './harness.mjs';
import path from 'node:path';

const env = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
const base = env('UI_BASE'), token = env('UI_TOKEN'), invitation = env('UI_INVITATION'), out = env('UI_ARTEFACTS');
const adminEmail = env('UI_EMAIL'), invitedEmail = env('UI_INVITED_EMAIL');
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

const browser = await chromium.launch({ executablePath: env('UI_CHROMIUM'), args: ['--headless', '--no-sandbox', '--disable-gpu'] });

async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 }, locale: 'en-US' });
  const page = await context.newPage();
  page.setDefaultTimeout(120000); // how long a check may take to fail on a busy machine
  page.on('pageerror', (e) => { throw new Error('page error: ' + e.message); });
  page.on('dialog', (d) => d.accept()); // the confirm() of revoke and deactivate
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  return { page, cdp };
}

// authenticator adds a virtual platform authenticator that keeps resident
// credentials and verifies its user, as a phone or laptop does.
async function authenticator(cdp) {
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', { options: {
    protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true,
    automaticPresenceSimulation: true } });
  return authenticatorId;
}

const admin = await newPage();
let page = admin.page;
let current = 'admin';
async function step(name, f) {
  await f();
  await page.screenshot({ path: path.join(out, `passkeys-${current}-${name}.png`) });
  log(`ok ${current}: ${name}`);
}
// axe-core in the light and the dark theme (harness.mjs).
const axe = (view) => axeCheck(page, view);
const signOut = async () => {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).first().waitFor();
};
const passkeySignIn = async (email) => {
  await page.getByLabel('E-mail address (optional)').fill(email || '');
  await page.locator('#passkey-signin').click();
};
const signedIn = () => page.locator('header .user', { hasText: adminEmail }).waitFor();

try {
  const a1 = await authenticator(admin.cdp);
  await step('token sign-in', async () => {
    await page.goto(base + '/');
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await signedIn();
  });
  await step('register a passkey', async () => {
    await page.locator('header .user').click();
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    await page.getByLabel("New passkey's name").fill('laptop');
    await page.locator('#passkey-add').click();
    await page.locator('tr[data-passkey="laptop"]').waitFor();
    const { credentials } = await admin.cdp.send('WebAuthn.getCredentials', { authenticatorId: a1 });
    assert.equal(credentials.length, 1, 'the authenticator holds one credential');
    assert.ok(credentials[0].isResidentCredential, 'a discoverable credential (passkey)');
    await axe('settings');
  });
  await step('sign in with the passkey (discoverable)', async () => {
    await signOut();
    await passkeySignIn('');
    await signedIn();
  });
  await step('sign in with the passkey by e-mail', async () => {
    await signOut();
    await passkeySignIn(adminEmail);
    await signedIn();
  });
  // A second passkey on another authenticator: the first is unplugged (its
  // credential kept to plug back in later).
  const laptop = (await admin.cdp.send('WebAuthn.getCredentials', { authenticatorId: a1 })).credentials[0];
  await admin.cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: a1 });
  const a2 = await authenticator(admin.cdp);
  await step('a second passkey', async () => {
    await page.goto(base + '/settings');
    await page.getByLabel("New passkey's name").fill('phone');
    await page.locator('#passkey-add').click();
    await page.locator('tr[data-passkey="phone"]').waitFor();
    assert.equal(await page.locator('tr[data-passkey]').count(), 2);
    await signOut();
    await passkeySignIn('');
    await signedIn();
  });
  await step('sessions listed, others ended', async () => {
    await page.goto(base + '/settings');
    await page.locator('tr[data-session]').first().waitFor();
    assert.ok(await page.locator('tr[data-session]', { hasText: 'this browser' }).count() === 1);
    await page.locator('#sessions-end-others').click();
    await page.waitForFunction(() => document.querySelectorAll('tr[data-session]').length === 1);
  });
  await step('a personal token, shown once', async () => {
    await page.getByLabel('Token name').fill('script');
    await page.getByLabel('Expires in (days)').fill('7');
    await page.locator('#token-create').click();
    const secret = await page.locator('#token-secret code').innerText();
    assert.match(secret, /^ahk_[A-Za-z0-9_-]{43}$/);
    const r = await fetch(base + '/api/v1/workspaces', { headers: { Authorization: 'Bearer ' + secret } });
    assert.equal(r.status, 200, 'the new token works');
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Revoke token script' }).click();
    await page.locator('tr[data-token="script"]', { hasText: 'revoked' }).waitFor();
    const r2 = await fetch(base + '/api/v1/workspaces', { headers: { Authorization: 'Bearer ' + secret } });
    assert.equal(r2.status, 401, 'the revoked token is refused');
  });
  await step('revoke the phone passkey: its sign-in fails', async () => {
    await page.getByRole('button', { name: 'Revoke passkey phone' }).click();
    await page.waitForFunction(() => !document.querySelector('tr[data-passkey="phone"]'));
    await signOut();
    await passkeySignIn('');
    await page.locator('#passkey-error').waitFor();
    assert.match(await page.locator('#passkey-error').innerText(), /refused|not found/i);
    assert.equal(await page.locator('header .user').count(), 0, 'not signed in');
  });
  await step('the laptop passkey still signs in', async () => {
    await admin.cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: a2 });
    const a3 = await authenticator(admin.cdp);
    await admin.cdp.send('WebAuthn.addCredential', { authenticatorId: a3, credential: laptop });
    await passkeySignIn('');
    await signedIn();
  });

  // The invited person, in a browser of their own.
  const invited = await newPage();
  page = invited.page; current = 'invited';
  await authenticator(invited.cdp);
  await step('invitation: register a passkey and join', async () => {
    await page.goto(base + '/join?invitation=' + invitation);
    await page.getByRole('heading', { name: 'You are invited' }).waitFor();
    assert.ok(!page.url().includes('invitation='), `the address still holds the link: ${page.url()}`);
    await axe('join');
    await page.locator('#join-register').click();
    await page.locator('header .user', { hasText: invitedEmail }).waitFor();
  });
  await step('the invitation works once', async () => {
    // Another browser (not signed in) with the same link.
    const other = await newPage();
    await authenticator(other.cdp);
    await other.page.goto(base + '/join?invitation=' + invitation);
    await other.page.locator('#join-register').click();
    await other.page.locator('#join-error').waitFor();
    assert.match(await other.page.locator('#join-error').innerText(), /used|invitation/i);
    await other.page.context().close();
  });

  page = admin.page; current = 'admin';
  await step('people: the invited person, then deactivated', async () => {
    await page.getByRole('link', { name: 'People' }).click();
    const row = page.locator(`tr[data-person="${invitedEmail}"]`);
    await row.waitFor();
    await axe('people');
    await row.getByRole('button', { name: 'Deactivate' }).click();
    await row.locator('strong', { hasText: 'deactivated' }).waitFor();
  });
  page = invited.page; current = 'invited';
  await step('the deactivated person is signed out at once', async () => {
    // Any request now ends the session: the page's own (the notifications'
    // stream) may have done so already, else a click makes one.
    const signIn = page.getByRole('heading', { name: 'Sign in' }).first();
    await Promise.race([signIn.waitFor(), page.locator('header .user').click().catch(() => {})]);
    await signIn.waitFor();
    await passkeySignIn('');
    await page.locator('#passkey-error').waitFor();
  });
} catch (e) {
  await page.screenshot({ path: path.join(out, 'passkeys-failed.png') }).catch(() => {});
  log('page text:\n' + await page.locator('body').innerText().catch(() => ''));
  throw e;
} finally {
  await browser.close();
}
