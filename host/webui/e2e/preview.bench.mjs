// The preview's figure (BenchmarkUIPreview in cmd/agenthost starts this
// against a real serve with a scripted model and a 500-page PDF uploaded,
// its id in UI_PDF500). Prints "RESULT {json}".
//
//   firstPageMs  a citation clicked to its page drawn (pdf.js over the
//                page's copy from the page route), each run in a fresh browser context (nothing
//                cached: the preview module, pdf.js and its worker load
//                too), median of 5 runs at pages across the document
//   firstPageKB  bytes fetched for that page (copy or ranges), median
import { chromium } from 'playwright-core';

const env = (k) => process.env[k];
const base = env('UI_BASE'), token = env('UI_TOKEN'), ws = env('UI_WS'), pdf = env('UI_PDF500');
const browser = await chromium.launch({ executablePath: env('UI_CHROMIUM'),
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
const ms = [], kb = [];
for (const target of [50, 150, 250, 350, 450]) {
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const signIn = await ctx.request.post(base + '/api/v1/session', { data: { token } });
  if (signIn.status() !== 201) throw new Error('sign-in: ' + signIn.status());
  const page = await ctx.newPage();
  page.setDefaultTimeout(120000);
  let bytes = 0, reqs = 0;
  page.on('response', (r) => { if (r.url().includes(`/files/${pdf}/`) && /\/(content|pdf)$/.test(r.url())) { reqs++; bytes += Number(r.headers()['content-length'] || 0); } });
  await page.goto(`${base}/w/${ws}`, { waitUntil: 'networkidle' });
  await page.fill('#chat-input', `Cite page ${target} of file ${pdf}`);
  await page.press('#chat-input', 'Enter');
  await page.locator('[data-testid=run-status][data-status=completed]').waitFor();
  await page.locator(`.msg.assistant button.cite[data-file="${pdf}"]`).click();
  await page.locator(`[data-testid=pdf-page][data-drawn="${target}"]`).waitFor();
  ms.push(await page.evaluate(() => window.__agenthost.previewDrawnAt - window.__agenthost.previewOpenedAt));
  kb.push(bytes / 1024);
  // Where the time goes: pdf.js loaded (the first range asked for), the
  // ranges (the last one in), the page drawn.
  const [first, last] = await page.evaluate((id) => {
    const r = performance.getEntriesByType('resource').filter((e) => e.name.includes(`/files/${id}/`) && /\/(content|pdf)$/.test(e.name));
    const t0 = window.__agenthost.previewOpenedAt;
    return [Math.min(...r.map((e) => e.startTime)) - t0, Math.max(...r.map((e) => e.responseEnd)) - t0];
  }, pdf);
  process.stderr.write(`page ${target}: ${reqs} requests, ${Math.round(bytes / 1024)} KB; first range at ${Math.round(first)} ms, last in at ${Math.round(last)} ms, drawn at ${Math.round(ms[ms.length - 1])} ms\n`);
  await ctx.close();
}
const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
process.stdout.write('RESULT ' + JSON.stringify({ firstPageMs: median(ms), firstPageKB: median(kb), runsMs: ms, runsKB: kb }) + '\n');
await browser.close();
