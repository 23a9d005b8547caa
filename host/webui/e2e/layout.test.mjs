// The workspace's areas, the conversation list beside them and the
// notifications, in headless Chromium against a real `serve` with a
// scripted model and a secret key (started by TestBrowserLayout in
// cmd/agenthost). A failed check throws: the process exits non-zero.
//
// The browser's Notification API is wrapped (not replaced) by an init
// script that records each notification the page makes and passes it on
// to Chromium's own: headless Chromium shows none on a screen, so the
// record is what can be checked. The permission is granted to the context
// as a person who allowed notifications would have.
import assert from 'node:assert/strict';
import path from 'node:path';
import { env, log, launch, context, newPage, steps } from './harness.mjs';

const base = env('UI_BASE'), token = env('UI_TOKEN'), ws = env('UI_WS'), out = env('UI_ARTEFACTS');

const browser = await launch();
const ctx = await context(browser, { permissions: ['notifications'] });
const recordNotifications = () => {
  const Real = window.Notification;
  window.__notified = [];
  if (!Real) return;
  window.Notification = class extends Real {
    constructor(title, opts) { super(title, opts); window.__notified.push({ title, body: (opts && opts.body) || '' }); }
  };
};
await ctx.addInitScript(recordNotifications);
// The notification streams the context holds open: one for all its tabs.
let openStreams = 0;
const isStream = (r) => r.url().endsWith('/api/v1/me/notifications/events');
ctx.on('request', (r) => { if (isStream(r)) openStreams++; });
ctx.on('requestfinished', (r) => { if (isStream(r)) openStreams--; });
ctx.on('requestfailed', (r) => { if (isStream(r)) openStreams--; });
let page = await newPage(ctx, 60000);
const watch = (p) => p.on('pageerror', (e) => { throw new Error('page error: ' + e.message); });
const { step, axe, count } = steps(() => page);

// noOverflow: nothing of the page, the area links or the header runs out
// to the side (long German labels wrap instead).
async function noOverflow(view) {
  const o = await page.evaluate(() => {
    const over = (el) => (el ? el.scrollWidth - el.clientWidth : 0);
    return { page: document.documentElement.scrollWidth - window.innerWidth, areas: over(document.querySelector('nav.areas')), top: over(document.querySelector('header.top')) };
  });
  assert.ok(o.page <= 1 && o.areas <= 1 && o.top <= 1, `${view}: horizontal overflow ${JSON.stringify(o)}`);
}

const area = (a) => page.locator(`nav.areas a[data-area=${a}]`);
const here = async (a) => assert.equal(await area(a).getAttribute('aria-current'), 'page', `the ${a} area is the current one`);
const unread = () => page.locator('[data-testid=notices-unread]');

// startJob starts a background job through the API as the page's person
// (the session cookie and its CSRF token), as any client of the API would.
const startJob = (description) => page.evaluate(async ([w, d]) => {
  const s = await (await fetch('/api/v1/session')).json();
  const r = await fetch(`/api/v1/workspaces/${w}/background`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': s.csrf },
    body: JSON.stringify({ description: d }) });
  return { status: r.status, body: await r.json() };
}, [ws, description]);

await step('signed-in', async () => {
  await page.goto(base + '/');
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForURL(`${base}/w/${ws}`);
  await page.locator('#chat-input').waitFor();
  await here('chat');
  assert.ok(await page.locator('#conv-side').isVisible(), 'the conversation list is beside the chat');
  assert.equal(await page.locator('.conv-toggle').getAttribute('aria-expanded'), 'true');
  // The notifications load a moment after the first view.
  await page.locator('.notices-button').waitFor();
  assert.equal(await unread().count(), 0);
  await axe('chat area');
});

await step('area-files', async () => {
  await area('files').click();
  await page.waitForURL(`${base}/w/${ws}/files`);
  await page.locator('[data-testid=dropzone]').waitFor();
  await page.locator('#search-q').waitFor();
  await here('files');
  assert.equal(await page.locator('#chat-input').count(), 0, 'the chat is not in the files area');
  assert.ok(await page.locator('#conv-side').isVisible(), 'the conversation list is beside the files');
  // A reload keeps the area.
  await page.reload();
  await page.locator('[data-testid=dropzone]').waitFor();
  await here('files');
  await axe('files area');
});

await step('area-sources', async () => {
  await area('sources').click();
  await page.waitForURL(`${base}/w/${ws}/sources`);
  await page.locator('main [data-view=connections] h2#conn-h').waitFor();
  await page.locator('main .datasources').waitFor();
  await here('sources');
  assert.ok(await page.locator('#conv-side').isVisible());
  await axe('connections and data sources area');
});

await step('back-and-forth', async () => {
  await page.goBack();
  await page.waitForURL(`${base}/w/${ws}/files`);
  await page.locator('[data-testid=dropzone]').waitFor();
  await page.goBack();
  await page.waitForURL(`${base}/w/${ws}`);
  await page.locator('#chat-input').waitFor();
  await page.goForward();
  await page.locator('[data-testid=dropzone]').waitFor();
});

await step('area-admin', async () => {
  await area('admin').click();
  await page.waitForURL(`${base}/admin`);
  await page.locator('main').waitFor();
  await page.goBack();
  await page.locator('[data-testid=dropzone]').waitFor();
});

await step('conversation-list-collapses', async () => {
  await area('chat').click();
  await page.locator('#chat-input').waitFor();
  await page.click('.conv-toggle');
  assert.equal(await page.locator('.conv-toggle').getAttribute('aria-expanded'), 'false');
  assert.equal(await page.locator('#conv-side').isVisible(), false);
  // Kept closed in this browser, across a reload.
  await page.reload();
  await page.locator('#chat-input').waitFor();
  assert.equal(await page.locator('#conv-side').isVisible(), false);
  await page.click('.conv-toggle');
  assert.ok(await page.locator('#conv-side').isVisible());
});

// A real background job: queued, worked by the host's job queue, its
// agent answered by the scripted model; the person is in the files area.
await step('background-job-notified', async () => {
  await area('files').click();
  await page.locator('[data-testid=dropzone]').waitFor();
  // What ended before the page opened is listed, not announced: the page
  // is open (its notifications loaded) before the job starts.
  await page.locator('.notices-button').waitFor();
  // A second tab of the same browser: it is told too, over the first
  // one's stream.
  const second = await ctx.newPage();
  watch(second);
  await second.goto(`${base}/w/${ws}`);
  await second.locator('.notices-button').waitFor();
  const r = await startJob('Summarise the release notes');
  assert.equal(r.status, 202, JSON.stringify(r.body));
  await page.locator('[data-testid=notices-unread]', { hasText: '1' }).waitFor({ timeout: 90000 });
  await second.locator('[data-testid=notices-unread]', { hasText: '1' }).waitFor();
  assert.equal(openStreams, 1, 'notification streams open in the browser with two tabs');
  await second.close();
  await page.locator('[data-testid=notices-live]', { hasText: 'Background job “Summarise the release notes” completed' }).waitFor();
  const shown = await page.evaluate(() => window.__notified);
  assert.ok(shown.some((x) => x.title === 'Background job “Summarise the release notes” completed' && /Noted/.test(x.body)),
    'the browser was asked to notify: ' + JSON.stringify(shown));
  await page.click('.notices-button');
  const item = page.locator('#notices-panel li[data-kind=backgroundJob][data-status=completed].unread');
  await item.waitFor();
  assert.match(await item.innerText(), /Summarise the release notes/);
  await axe('notifications open');
  await page.click('[data-testid=notices-read-all]');
  await page.locator('#notices-panel li[data-kind=backgroundJob].read').waitFor();
  assert.equal(await unread().count(), 0);
  // Escape closes the list and gives the focus back to its button.
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('#notices-panel').count(), 0);
  assert.equal(await page.evaluate(() => document.activeElement.className), 'notices-button');
});

// A call that waits for approval while the person looks at their files.
await step('approval-notified', async () => {
  await area('chat').click();
  await page.click('button.new');
  await page.fill('#chat-input', 'Tag the manual as final.');
  await page.press('#chat-input', 'Enter');
  await page.waitForURL(new RegExp(`/w/${ws}/c/`));
  const conv = new URL(page.url()).pathname;
  await page.locator('.notices-button').waitFor();
  await area('files').click();
  await page.locator('[data-testid=dropzone]').waitFor();
  await page.locator('[data-testid=notices-unread]', { hasText: '1' }).waitFor({ timeout: 90000 });
  await page.locator('[data-testid=notices-live]', { hasText: '“tagFile” waits for your approval' }).waitFor();
  assert.ok((await page.evaluate(() => window.__notified)).some((x) => x.title === '“tagFile” waits for your approval'));
  await page.click('.notices-button');
  await page.locator('#notices-panel li[data-kind=approval].unread').waitFor();
  await page.screenshot({ path: path.join(out, 'notifications-open.png') });
  await page.click('#notices-panel li[data-kind=approval] button.notice-open');
  await page.waitForURL(base + conv);
  const card = page.locator('[data-testid=approval][data-status=pending]');
  await card.waitFor();
  assert.equal(await unread().count(), 0, 'opening the notification read it');
  await card.locator('[data-testid=approval-deny]').click();
  await card.locator('[data-testid=approval-deny-confirm]').click();
  await page.locator('[data-testid=approval][data-status=denied]').waitFor();
});

await step('dark-theme', async () => {
  await page.emulateMedia({ colorScheme: 'dark' });
  for (const a of ['chat', 'files', 'sources']) {
    await area(a).click();
    await page.locator(`main[data-area=${a}]`).waitFor();
    await axe(`${a} area, dark`);
  }
  await page.click('.notices-button');
  await page.locator('#notices-panel').waitFor();
  await axe('notifications, dark');
  await page.keyboard.press('Escape');
});

await step('german', async () => {
  await page.emulateMedia({ colorScheme: 'light' });
  await page.selectOption('#lang', 'de');
  await page.locator('nav.areas a[data-area=files]', { hasText: 'Dateien und Wissen' }).waitFor();
  assert.match(await area('sources').innerText(), /Verbindungen und Datenquellen/);
  await page.locator('.notices-button', { hasText: 'Benachrichtigungen' }).waitFor();
  for (const width of [1300, 1024, 901]) {
    await page.setViewportSize({ width, height: 900 });
    await noOverflow(`German at ${width} px`);
  }
  await page.setViewportSize({ width: 1300, height: 900 });
  await page.click('.notices-button');
  await page.locator('#notices-panel li[data-kind=approval]', { hasText: '„tagFile“ wartet auf Ihre Freigabe' }).waitFor();
  await axe('German, notifications open');
  await page.keyboard.press('Escape');
  await page.selectOption('#lang', 'en');
});

// A 390 px phone: the list is a drawer, closed until asked for.
let phone;
await step('phone', async () => {
  phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, locale: 'en-US' });
  await phone.addInitScript(recordNotifications);
  const r = await phone.request.post(base + '/api/v1/session', { data: { token } });
  assert.equal(r.status(), 201);
  page = await phone.newPage();
  watch(page);
  await page.goto(`${base}/w/${ws}`);
  await page.locator('#chat-input').waitFor();
  assert.equal(await page.locator('#conv-side').isVisible(), false, 'the drawer starts closed on a phone');
  await noOverflow('phone, chat');
  await page.click('.conv-toggle');
  await page.locator('#conv-side').waitFor();
  assert.ok(await page.evaluate(() => document.getElementById('conv-side').contains(document.activeElement)), 'the drawer has the focus');
  await axe('phone, drawer open');
  await page.screenshot({ path: path.join(out, 'phone-drawer.png') });
  // Escape closes it and the focus returns to its button.
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('#conv-side').isVisible(), false);
  assert.equal(await page.evaluate(() => document.activeElement.className), 'conv-toggle');
  // A conversation picked in the drawer opens, and the drawer closes.
  await page.click('.conv-toggle');
  await page.locator('#conv-side .conv-list li a').first().click();
  await page.waitForURL(new RegExp(`/w/${ws}/c/`));
  assert.equal(await page.locator('#conv-side').isVisible(), false);
  await area('files').click();
  await page.locator('[data-testid=dropzone]').waitFor();
  await noOverflow('phone, files');
  await axe('phone, files');
});
await phone.close();

await browser.close();
log(`layout: ${count()} steps passed`);
