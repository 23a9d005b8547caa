// The UI's figures (BenchmarkUI in cmd/agenthost starts this against a real
// serve with a scripted model). Prints one line "RESULT {json}" at the end;
// in the middle it prints "READY <workflow id>" and waits for a line on
// stdin: the Go side then appends 1,000 chunk events to that workflow in a
// burst, which the open page receives over SSE.
//
//   initialLoadKB  bytes transferred (compressed, headers included) for the
//                  first view of a workspace: page, modules, styles, API
//   firstTokenMs   send to the first streamed token painted, median of 7
//   eventRenderMs  per chunk event of the burst: arrival to the animation
//                  frame that paints it; p50 and p99
import { chromium } from 'playwright-core';
import { createInterface } from 'node:readline';

const env = (k) => process.env[k];
const base = env('UI_BASE'), token = env('UI_TOKEN'), ws = env('UI_WS');
const browser = await chromium.launch({ executablePath: env('UI_CHROMIUM'),
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
const signIn = await ctx.request.post(base + '/api/v1/session', { data: { token } });
if (signIn.status() !== 201) throw new Error('sign-in: ' + signIn.status());

// First view, with an empty cache (a new context shares none).
const page = await ctx.newPage();
await page.goto(`${base}/w/${ws}`, { waitUntil: 'networkidle' });
await page.waitForSelector('#chat-input');
const bytes = await page.evaluate(() => performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
  .reduce((n, e) => n + e.transferSize, 0));

const firsts = [];
for (let i = 0; i < 7; i++) {
  await page.click('button.new');
  await page.fill('#chat-input', `first token ${i}`);
  await page.press('#chat-input', 'Enter');
  await page.waitForFunction(() => window.__agenthost.firstChunkPaint > 0);
  firsts.push(await page.evaluate(() => window.__agenthost.firstChunkPaint - window.__agenthost.sentAt));
  await page.locator('[data-testid=run-status][data-status=completed]').waitFor();
}
firsts.sort((a, b) => a - b);

const wf = new URL(page.url()).pathname.split('/').pop();
const before = await page.evaluate(() => { const m = window.__agenthost; m.eventLatencies = []; return m.applied; });
process.stdout.write(`READY ${wf}\n`);
const rl = createInterface({ input: process.stdin });
await new Promise((r) => rl.once('line', r));
await page.waitForFunction((n) => window.__agenthost.applied >= n, before + 1000, { timeout: 120000 });
await page.waitForTimeout(100); // the last frame's latencies
const lat = await page.evaluate(() => window.__agenthost.eventLatencies.slice());
lat.sort((a, b) => a - b);
const pct = (p) => lat[Math.min(lat.length - 1, Math.ceil(p * lat.length) - 1)];
const text = await page.locator('.msg.assistant').last().innerText();
process.stdout.write('RESULT ' + JSON.stringify({ initialLoadKB: bytes / 1024, firstTokenMs: firsts[3], events: lat.length,
  eventRenderP50: pct(0.5), eventRenderP99: pct(0.99), burstTextLength: text.length }) + '\n');
rl.close();
await browser.close();
