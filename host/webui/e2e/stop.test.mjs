// A graceful server stop in the middle of a streamed answer, in headless
// Chromium (TestBrowserGracefulStop in cmd/agenthost sends the server
// SIGTERM once this script prints "streaming", writes "down" on its
// standard input once the server has exited and "up" once it is back).
// The page is never reloaded: while the server is away it keeps the text
// streamed so far, and it never says "Stopped by the user" nor shows the
// run stopped; once the server is back the round runs again to its
// answer, shown once. A failed check throws: the process exits non-zero.
import assert from 'node:assert/strict';
import { createInterface } from 'node:readline';
import { env, log, launch, context, newPage, signIn, steps } from './harness.mjs';

const base = env('UI_BASE'), token = env('UI_TOKEN'), ws = env('UI_WS');
const input = createInterface({ input: process.stdin });
const told = input[Symbol.asyncIterator]();
const waitFor = async (word) => {
  for (;;) {
    const { value, done } = await told.next();
    if (done) throw new Error(`stdin ended before "${word}"`);
    if (value.trim() === word) return;
  }
};

const browser = await launch();
const page = await newPage(await context(browser));
const { step, axe } = steps(() => page);
const answer = () => page.locator('.msg.assistant').last();
// Every text the run's state and the messages showed, from the first
// chunk on: "Stopped by the user" or a stopped state even for a moment
// is a failure.
const watchStates = () => page.evaluate(() => {
  window.__said = [];
  new MutationObserver(() => {
    const st = document.querySelector('[data-testid=run-status]');
    window.__said.push({ status: st ? st.dataset.status : '', text: document.querySelector('main').innerText });
  }).observe(document.body, { subtree: true, childList: true, characterData: true });
});

let before = '';
await step('streaming', async () => {
  await signIn(page, base, token);
  await page.evaluate(() => { window.__sameLoad = true; });
  await page.fill('#chat-input', 'Tell me slowly about the stop.');
  await page.press('#chat-input', 'Enter');
  await page.waitForURL(new RegExp(`/w/${ws}/c/`));
  await watchStates();
  // A few words in: the answer streams (w01 w02 …, 120 ms a chunk).
  await page.waitForFunction(() => { const m = [...document.querySelectorAll('.msg.assistant.streaming')].pop(); return m && /w05/.test(m.innerText); });
  process.stdout.write('streaming\n');
});

await step('server-down-text-kept', async () => {
  await waitFor('down');
  // The stream is cut: the page tries again, and keeps what it had.
  await page.locator('.run-state .warn', { hasText: 'Reconnecting' }).waitFor();
  before = (await answer().innerText()).replace(/\s+/g, ' ');
  assert.match(before, /w01 w02 w03 w04 w05/, 'the text streamed so far is kept: ' + before);
  const text = await page.locator('main').innerText();
  assert.doesNotMatch(text, /stopped by the user/i);
  assert.notEqual(await page.locator('[data-testid=run-status]').getAttribute('data-status'), 'stopped');
  await axe('server away');
  process.stdout.write('checked-down\n');
});

await step('server-back-answer-once', async () => {
  await waitFor('up');
  // The next start runs the round again from its request: its answer,
  // once, and the run completed; no reload of the page.
  await page.locator('[data-testid=run-status][data-status=completed]').waitFor();
  const final = (await answer().innerText()).replace(/\s+/g, ' ');
  assert.equal(final.split('w60').length - 1, 1, 'the answer once: ' + final);
  assert.equal(final.split('w01').length - 1, 1, 'the answer once: ' + final);
  assert.equal(await page.locator('.msg.assistant').count(), 1, 'one answer');
  assert.equal(await page.evaluate(() => window.__sameLoad), true, 'the page was not loaded again');
  const said = await page.evaluate(() => window.__said);
  const stopped = said.find((s) => s.status === 'stopped' || /stopped by the user/i.test(s.text));
  assert.ok(!stopped, 'the page said the run was stopped: ' + JSON.stringify(stopped && { status: stopped.status, text: stopped.text.slice(-300) }));
  await axe('answered after the restart');
});

await browser.close();
input.close(); // or the open standard input keeps the process
log('stop: all steps passed');
process.stdout.write('done\n');
