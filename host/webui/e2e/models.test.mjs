// The model picker in headless Chromium against a real `serve` whose agent
// chain is gpt-4o-mini, gpt-4o (started by TestBrowserModelPicker in
// cmd/agenthost, which checks afterwards which model the scripted server
// was asked for). A failed check throws: the process exits non-zero.
import assert from 'node:assert/strict';
import { env, launch, context, newPage, steps } from './harness.mjs';

const base = env('UI_BASE'), token = env('UI_TOKEN'), ws = env('UI_WS');

const browser = await launch();
const ctx = await context(browser);
const page = await newPage(ctx);
const { step, axe } = steps(() => page);

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
  await axe('model-picker', '.model-picker');
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
