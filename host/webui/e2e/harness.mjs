// The browser tests' shared harness: the UI_* variables the Go tests pass,
// Chromium started as every script starts it, a context with a signed-in
// page, steps that log and leave a screenshot (and the page's text when
// they fail), and axe-core run in the light and the dark theme. A script
// imports what it needs instead of repeating the setup.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

// env is a variable the Go test must set.
export const env = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
export const log = (...a) => process.stderr.write(a.join(' ') + '\n');

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

// launch starts Debian's Chromium headless; extra are more flags (a fake
// microphone, autoplay).
export function launch(extra = []) {
  return chromium.launch({ executablePath: env('UI_CHROMIUM'),
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', ...extra] });
}

// context opens a browser context with the tests' defaults (1300 × 900,
// English, light scheme), opts overriding them.
export function context(browser, opts = {}) {
  return browser.newContext({ viewport: { width: 1300, height: 900 }, locale: 'en-US', colorScheme: 'light', ...opts });
}

// newPage opens a page whose uncaught errors fail the script. A wait is
// how long a check may take to fail on a busy machine (`make test` runs
// many packages at once on two cores), not a speed requirement.
export async function newPage(ctx, timeout = 120000) {
  const page = await ctx.newPage();
  page.setDefaultTimeout(timeout);
  page.on('pageerror', (e) => { throw new Error('page error: ' + e.message); });
  return page;
}

// signIn signs the page in with a token through the sign-in form and
// waits for the workspace.
export async function signIn(page, base, token) {
  await page.goto(base + '/');
  await page.locator('#token').fill(token);
  await page.locator('form[aria-labelledby=signin-title] button[type=submit]').click();
  await page.locator('header .user').waitFor();
}

// signInContext signs a context in through the API (no form): the pages it
// opens afterwards are signed in.
export async function signInContext(ctx, base, token) {
  const r = await ctx.request.post(base + '/api/v1/session', { data: { token } });
  assert.equal(r.status(), 201, 'sign-in');
}

// axeCheck runs axe-core on page (through the DevTools protocol, which
// the page's CSP does not govern: a <script> tag with axe's source would
// be inline script, which the CSP blocks, as it should) in the light and
// the dark theme, and fails on any serious or critical violation (and on
// a heading out of order). The
// page's own theme is put back after. within limits the check to a
// selector's element.
export async function axeCheck(page, view, within) {
  const before = await page.evaluate(() => document.documentElement.getAttribute('data-theme'));
  try {
    for (const theme of ['light', 'dark']) {
      await page.evaluate((th) => { document.documentElement.dataset.theme = th; }, theme);
      await page.evaluate(axeSource);
      const r = await page.evaluate((sel) => window.axe.run(sel ? document.querySelector(sel) : document, { resultTypes: ['violations'] }), within || '');
      // heading-order is moderate to axe, but a screen reader's outline
      // of the page is how its reader finds their way: it fails too.
      const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical' || v.id === 'heading-order');
      for (const v of r.violations) {
        log(`  axe ${view} (${theme}): ${v.impact} ${v.id} (${v.nodes.length}) ${v.nodes.slice(0, 3).map((x) => x.target.join(' ') + ' ' + (x.failureSummary || '').replace(/\s+/g, ' ').slice(0, 160)).join(' | ')}`);
      }
      assert.equal(bad.length, 0, `axe found serious/critical violations (or heading-order) on ${view} (${theme}): ${bad.map((v) => v.id).join(', ')}`);
    }
  } finally {
    await page.evaluate((th) => { if (th === null) delete document.documentElement.dataset.theme; else document.documentElement.dataset.theme = th; }, before);
  }
}

// steps makes a script's step and axe functions over the page current()
// answers (a script may switch pages): each step logs, leaves a numbered
// screenshot in UI_ARTEFACTS, and on failure a failed-<name>.png, the
// page's text and what onFail adds; after runs once a step passed.
export function steps(current, { onFail, after } = {}) {
  const out = env('UI_ARTEFACTS');
  let n = 0;
  const step = async (name, f) => {
    const t0 = Date.now();
    const page = current();
    try {
      await f();
    } catch (e) {
      const p = current() || page;
      await p.screenshot({ path: path.join(out, `failed-${name}.png`) }).catch(() => {});
      if (onFail) await onFail(name, p).catch(() => {});
      log(`FAILED ${name}: page text:\n${await p.locator('body').innerText().catch(() => '')}`);
      throw e;
    }
    if (after) await after(name, current());
    n++;
    const file = path.join(out, `${String(n).padStart(2, '0')}-${name}.png`);
    await current().screenshot({ path: file });
    log(`ok ${n} ${name} (${Date.now() - t0} ms) ${file}`);
    return file;
  };
  const axe = (view, within) => axeCheck(current(), view, within);
  return { step, axe, count: () => n };
}
