// The admin console in headless Chromium against a real serve process
// (TestBrowserAdmin in cmd/agenthost), which seeded usage over three days,
// a plugin upgrade in the plugin audit and a member who is no admin. This
// test adds an external MCP server, a background job and 55 API tokens
// through the API (audit entries, more than a page), then opens each view of
// the console, checks what it shows and runs axe-core on it (no serious or
// critical violation); the member sees no console link, the console's
// refusal, and the API refuses them. Screenshots go to UI_ARTEFACTS.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { axeCheck } from './harness.mjs';
import path from 'node:path';

const env = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
const base = env('UI_BASE'), token = env('UI_TOKEN'), memberToken = env('UI_MEMBER_TOKEN'), out = env('UI_ARTEFACTS');
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

// The seeded MCP server: an HTTP one (never contacted: listing does not
// connect).
const added = await fetch(base + '/api/v1/mcp-servers', { method: 'POST',
  headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
  body: JSON.stringify({ name: 'wiki', transport: 'http', url: 'https://mcp.example.com/mcp' }) });
assert.equal(added.status, 201, 'adding the MCP server: ' + await added.text());
// A background job (with no model configured it fails or waits; either
// way the console lists it).
const job = await fetch(base + '/api/v1/workspaces/' + env('UI_WORKSPACE') + '/background', { method: 'POST',
  headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
  body: JSON.stringify({ description: 'Summarise the quarterly reports', maxCostCHF: '0.50' }) });
assert.equal(job.status, 202, 'starting the background job: ' + await job.clone().text());
// 55 API tokens: 55 audit entries, more than one page of the audit log.
for (let i = 0; i < 55; i++) {
  const r = await fetch(base + '/api/v1/me/tokens', { method: 'POST',
    headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'pager ' + i, expiresInDays: 1 }) });
  assert.equal(r.status, 201, 'token ' + i + ': ' + await r.text());
}

const browser = await chromium.launch({ executablePath: env('UI_CHROMIUM'), args: ['--headless', '--no-sandbox', '--disable-gpu'] });
async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, locale: 'en-US' });
  const page = await context.newPage();
  page.setDefaultTimeout(60000); // how long a check may take to fail on a busy machine
  page.on('pageerror', (e) => { throw new Error('page error: ' + e.message); });
  return page;
}
let page = await newPage();
// axe-core in the light and the dark theme (harness.mjs).
const axe = (view) => axeCheck(page, view);
async function signIn(secret) {
  await page.goto(base + '/');
  await page.getByLabel('API token').fill(secret);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.locator('header .user').waitFor();
}
// view opens one view of the console from its navigation, checks it,
// runs axe-core and leaves a screenshot admin-<key>.png.
async function view(key, name, check) {
  await page.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { level: 2, name, exact: true }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/admin/' + key);
  await check(page.locator(`[data-admin="${key}"]`));
  // axe-core and the screenshot on the view as loaded, not half of it.
  await page.waitForFunction(() => ![...document.querySelectorAll('[data-view="admin"] p.muted')].some((p) => p.textContent === 'Loading…'));
  await axe(key);
  await page.screenshot({ path: path.join(out, `admin-${key}.png`), fullPage: key !== 'audit' }); // the audit log's 50 rows: the first screenful
  log(`ok admin: ${key}`);
}

try {
  await signIn(token);
  await page.getByRole('link', { name: 'Admin', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Admin console of Acme' }).waitFor();

  await view('workspaces', 'Workspaces', async (v) => {
    const row = v.locator('table[data-table="workspaces"] tbody tr').first();
    await row.locator('li', { hasText: 'ada@acme.example' }).waitFor();
    await row.locator('li', { hasText: 'max@acme.example — member' }).waitFor();
    assert.equal(await row.getByRole('link', { name: 'Manage in People' }).getAttribute('href'), '/people');
  });
  await view('tools', 'Tool sets', async (v) => {
    await v.locator('table[data-toolset] tbody tr').first().waitFor();
    const api = await (await fetch(base + '/api/v1/workspaces/' + env('UI_WORKSPACE') + '/tools', { headers: { Authorization: 'Bearer ' + token } })).json();
    assert.equal(await v.locator('table[data-toolset] tbody tr').count(), api.length, 'one row a tool of the set');
    await v.locator('table[data-toolset] tr', { hasText: api[0].name }).locator('td', { hasText: api[0].plugin }).first().waitFor();
    // A tool whose MCP server is down stays listed, unavailable with why.
    const down = api.find((t) => t.name === env('UI_DOWN_TOOL'));
    assert.ok(down && down.unavailable, 'the API lists ' + env('UI_DOWN_TOOL') + ' as unavailable');
    const row = v.locator('table[data-toolset] tr[data-unavailable="true"]', { hasText: down.name });
    await row.locator('td', { hasText: 'no: ' + down.unavailable }).waitFor();
    assert.equal(await v.locator('table[data-toolset] tr[data-unavailable="true"]').count(), api.filter((t) => t.unavailable).length);
  });
  await view('plugins', 'Plugins', async (v) => {
    await v.locator('table[data-table="plugins"] tbody tr').first().waitFor();
    const api = await (await fetch(base + '/api/v1/plugins', { headers: { Authorization: 'Bearer ' + token } })).json();
    assert.equal(await v.locator('table[data-table="plugins"] tbody tr').count(), api.length, 'one row a plugin');
    const first = v.locator(`tr[data-plugin="${api[0].name}"]`);
    await first.locator('code', { hasText: api[0].sha256.slice(0, 16) }).waitFor();
    await first.locator('summary').click();
    await first.locator('details li').first().waitFor();
    await v.getByRole('heading', { name: 'Plugin audit' }).waitFor();
    const up = v.locator('tr[data-audit-plugin="greeter"]');
    await up.locator('td', { hasText: '0.1.0 → 0.2.0' }).waitFor();
    await up.locator('li', { hasText: 'host api.example.com: — → api.example.com widens' }).waitFor();
  });
  await view('mcp', 'MCP servers and connections', async (v) => {
    const row = v.locator('tr[data-mcp="wiki"]');
    await row.locator('td', { hasText: 'https://mcp.example.com/mcp' }).waitFor();
    await row.locator('td', { hasText: 'http' }).first().waitFor();
    await v.locator('table[data-table="providers"] tbody tr').first().waitFor();
  });
  await view('spending', 'Spending and usage', async (v) => {
    await v.locator('dl[data-budget]').waitFor();
    assert.equal(await v.locator('svg[data-chart="usage"] rect').count(), 3, 'a bar a day of usage');
    await v.locator('table[data-usage="model"] tr', { hasText: 'gpt-4o-mini' }).locator('td', { hasText: 'CHF 1.75' }).waitFor();
    await v.locator('table[data-usage="workspace"] tr', { hasText: 'CHF 1.75' }).locator('th').waitFor();
    await v.locator('table[data-usage="user"] tr', { hasText: 'ada@acme.example' }).locator('td', { hasText: 'CHF 1.75' }).waitFor();
  });
  await view('jobs', 'Background jobs', async (v) => {
    const row = v.locator('table[data-table="jobs"] tr', { hasText: 'Summarise the quarterly reports' });
    await row.waitFor();
    assert.match(await row.locator('td').first().innerText(), /^(queued|running|completed|failed|cancelled)$/);
  });
  await view('audit', 'Audit log', async (v) => {
    // The newest 50 first (the tokens), then the next page with the rest.
    const rows = v.locator('table[data-table="audit"] tbody tr');
    await rows.nth(49).waitFor();
    assert.equal(await rows.count(), 50);
    await rows.first().locator('td', { hasText: 'ada@acme.example (token)' }).waitFor();
    await v.getByRole('button', { name: 'Next page' }).click();
    await v.locator('table[data-table="audit"] th', { hasText: 'mcp_server.added' }).first().waitFor();
    assert.ok(await rows.count() < 50, 'the second page holds the rest');
    assert.ok(await v.getByRole('button', { name: 'Next page' }).isDisabled());
    await v.getByRole('button', { name: 'Previous page' }).click();
    await rows.nth(49).waitFor();
    await v.getByLabel('Action').fill('mcp_server.added');
    await v.getByRole('button', { name: 'Search' }).click();
    // The two servers added (the test's and the Go test's, whose server died).
    await v.locator('table[data-table="audit"] tbody tr').nth(2).waitFor({ state: 'detached' });
    assert.deepEqual(await v.locator('table[data-table="audit"] tbody th').allTextContents(), ['mcp_server.added', 'mcp_server.added']);
    await v.getByLabel('Action').fill('no.such.action');
    await v.getByRole('button', { name: 'Search' }).click();
    await v.locator('table[data-table="audit"] tbody tr').first().waitFor({ state: 'detached' });
    const csv = await v.getByRole('link', { name: 'CSV' }).getAttribute('href');
    assert.match(csv, /^\/api\/v1\/audit\/export\?format=csv&action=no\.such\.action$/);
    await v.getByLabel('Action').fill('');
    await v.getByRole('button', { name: 'Search' }).click();
    await rows.nth(49).waitFor();
    const jsonl = await page.evaluate(async (h) => (await fetch(h)).text(), await v.getByRole('link', { name: 'JSON lines' }).getAttribute('href'));
    assert.match(jsonl, /mcp_server\.added/);
    assert.ok(jsonl.trim().split('\n').length > 50, 'the export is not paged');
  });
  await page.context().close();

  // A member who is no admin: no link, the console's refusal, and the
  // API's (403) for the routes behind it.
  page = await newPage();
  await signIn(memberToken);
  assert.equal(await page.getByRole('link', { name: 'Admin', exact: true }).count(), 0, 'a member sees no console link');
  await page.goto(base + '/admin/audit');
  await page.getByText("Only the organisation's admins use the admin console.").waitFor();
  for (const p of ['/audit', '/audit/export?format=csv', '/mcp-servers', '/people', '/plugins/audit']) {
    const status = await page.evaluate(async (u) => (await fetch(u)).status, '/api/v1' + p);
    assert.equal(status, 403, `GET ${p} as a member`);
  }
  // The usage report is the member's own (none), not the tenant's.
  const own = await page.evaluate(async () => (await fetch('/api/v1/billing/usage?by=user&from=2000-01-01')).json());
  assert.equal(own.rows.length, 0, 'a member sees only their own usage: ' + JSON.stringify(own));
  await page.screenshot({ path: path.join(out, 'admin-member.png') });
  log('ok member: no console');
} catch (e) {
  await page.screenshot({ path: path.join(out, 'admin-failed.png') }).catch(() => {});
  log('page text:\n' + await page.locator('body').innerText().catch(() => ''));
  throw e;
} finally {
  await browser.close();
}
