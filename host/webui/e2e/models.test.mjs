// The model picker in headless Chromium against a real `serve` whose agent
// chain is gpt-4o-mini, gpt-4o (started by TestBrowserModelPicker in
// cmd/agenthost, which checks afterwards which model the scripted server
// was asked for). A failed check throws: the process exits non-zero.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const env = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
const base = env('UI_BASE'), token = env('UI_TOKEN'), ws = env('UI_WS'), out = env('UI_ARTEFACTS');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

const browser = await chromium.launch({ executablePath: env('UI_CHROMIUM'),
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
const ctx = await browser.newContext({ viewport: { width: 1300, height: 900 }, locale: 'en-US' });
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

await step('signed-in', async () => {
  await page.goto(base + '/');
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForURL(`${base}/w/${ws}`);
});

await step('picker-with-prices', async () => {
  await page.locator('#model-picker').waitFor();
  // Built-in list prices (host/llm/prices.go), exact decimals from the API.
  assert.deepEqual(await page.locator('#model-picker option').allTextContents(), [
    'gpt-4o-mini (default) · CHF 0.12 / 0.48 per 1M tokens (in/out)',
    'gpt-4o · CHF 2.00 / 8.00 per 1M tokens (in/out)',
  ]);
  assert.equal(await page.inputValue('#model-picker'), 'openai/gpt-4o-mini');
  await page.evaluate(axeSource);
  const r = await page.evaluate(() => window.axe.run(document.querySelector('.model-picker'), { resultTypes: ['violations'] }));
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.equal(bad.length, 0, `axe: ${bad.map((v) => v.id).join(', ')}`);
});

await step('started-with-gpt-4o', async () => {
  await page.selectOption('#model-picker', 'openai/gpt-4o');
  await page.fill('#chat-input', 'Which model answers?');
  await page.press('#chat-input', 'Enter');
  await page.waitForURL(new RegExp(`/w/${ws}/c/`));
  await page.locator('.msg.assistant').first().waitFor();
});

await step('kept-after-reload', async () => {
  await page.reload();
  await page.locator('#model-picker').waitFor();
  await page.waitForFunction(() => document.querySelector('#model-picker').value === 'openai/gpt-4o');
});

await browser.close();
