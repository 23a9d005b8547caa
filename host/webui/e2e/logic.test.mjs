// The UI's pure modules under node's test runner (TestUILogic in
// cmd/agenthost starts it): the conversation model's states and its
// once-only event handling, the Markdown renderer's safety, and how the
// Connections view reads the OAuth callback's outcome and a connection's state,
// and how the notifications read their stream and say what happened.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newConversation, applyEvent, runLabel, shown, citedPassage } from '../assets/conv.mjs';
import { passageItems, takeRanges } from '../assets/preview.mjs';
import { inPeriod } from '../assets/files.mjs';
import { markdown } from '../assets/md.mjs';
import { outline, toMarkdown, fileName } from '../assets/export.mjs';
import { callbackNotice, connectionState, safeRedirect } from '../assets/connections.mjs';
import { noticeText, noticeTarget, fresh, parseSSE } from '../assets/notices.mjs';

const feed = (c, events) => events.forEach(([type, data], i) => applyEvent(c, { seq: i + 1, type, data }));
const start = [['status', { status: 'running', label: 'round 1' }], ['message', { id: 'u', role: 'user', content: 'q' }]];

test('how runs end is shown as such', () => {
  const cases = [
    { name: 'completed', end: [['agentSummary', { reason: 'completed' }], ['complete', { reason: 'completed' }]], status: 'completed', label: 'completed' },
    { name: 'stopped by the user', end: [['stopped', { reason: 'stopped by the user' }]], status: 'stopped', label: 'stopped' },
    { name: 'budget exceeded', end: [['agentSummary', { reason: 'budgetExceeded', costCHF: 0.5 }], ['complete', { reason: 'budgetExceeded' }]], status: 'completed', label: 'budgetExceeded' },
    { name: 'round limit', end: [['agentSummary', { reason: 'maxRoundsReached' }], ['complete', {}]], status: 'completed', label: 'maxRoundsReached' },
    { name: 'failed', end: [['error', { message: 'model unreachable' }]], status: 'failed', label: 'failed', error: 'model unreachable' },
  ];
  for (const tc of cases) {
    const c = newConversation();
    feed(c, [...start, ['chunk', { messageId: 'a', text: 'part' }], ...tc.end]);
    assert.equal(c.status, tc.status, tc.name);
    assert.equal(runLabel(c), tc.label, tc.name);
    assert.equal(c.error, tc.error || '', tc.name);
    assert.ok(c.messages.every((m) => !m.streaming), tc.name + ': nothing shown as still streaming');
  }
});

test('a new round counts its model steps from none', () => {
  const c = newConversation();
  feed(c, [...start, ['agentProgress', { round: 1, maxRounds: 25 }], ['agentProgress', { round: 2, maxRounds: 25 }], ['complete', {}],
    ['status', { status: 'running', label: 'round 2' }]]);
  assert.equal(c.rounds, 0, 'the last round\'s steps are no step of this one');
  applyEvent(c, { seq: 99, type: 'agentProgress', data: { round: 1, maxRounds: 25 } });
  assert.equal(c.rounds, 1);
});

test('a new round clears the last one\'s end', () => {
  const c = newConversation();
  feed(c, [...start, ['agentSummary', { reason: 'budgetExceeded' }], ['complete', {}], ['status', { status: 'running', label: 'round 2' }]]);
  assert.equal(runLabel(c), 'running');
});

test('a round restarted on another host drops the cut answer and keeps its cost', () => {
  const c = newConversation();
  feed(c, [...start, ['chunk', { messageId: 'a', text: 'Half an ans' }], ['agentProgress', { round: 1, costCHF: '0.25', tokens: 100 }],
    ['chunk', { messageId: 'a', text: 'wer' }], ['agentSummary', { reason: 'handedOff', costCHF: '0.5', tokens: 200 }],
    ['roundRestarted', { round: 1, reason: 'handedOff', fromHost: 'h1' }],
    ['chunk', { messageId: 'b', text: 'Whole' }], ['agentProgress', { round: 1, costCHF: '0.125', tokens: 50, model: 'backup' }],
    ['message', { id: 'b', role: 'assistant', content: 'Whole answer.' }],
    ['agentSummary', { reason: 'completed', costCHF: '0.25', tokens: 80, model: 'backup' }], ['complete', { reason: 'completed' }]]);
  assert.deepEqual(c.messages.map((m) => m.id), ['u', 'b'], 'the cut attempt\'s answer is gone');
  assert.equal(c.byId.a, undefined);
  assert.equal(c.byId.b.content, 'Whole answer.');
  assert.equal(c.costCHF, '0.75', 'both attempts\' cost, as the workflow records it');
  assert.equal(c.cost, 0.75);
  assert.equal(c.tokens, 280);
  assert.equal(c.status, 'completed');
  assert.equal(c.model, 'backup', 'the model that answered is shown');
  // The next round counts from zero again.
  feed2(c, [['status', { status: 'running', label: 'round 2' }], ['agentProgress', { round: 1, costCHF: '0.5', tokens: 10 }]]);
  assert.equal(c.costCHF, '0.50');
});

// A host killed (kill -9) while the round's tools ran sent no agentProgress
// for the round: the toolCall events carry what its model call cost, as it
// was billed, so the live cost after the restart equals the recorded one.
test('a round cut by a killed host keeps the cost its toolCall events carried', () => {
  const c = newConversation();
  feed(c, [...start, ['agentProgress', { round: 1, costCHF: '0.14', tokens: 100 }],
    ['toolCall', { round: 2, callId: 'c1', tool: 'lookup', arguments: {}, costCHF: '0.28' }],
    ['chunk', { messageId: 'a', text: 'cut' }],
    ['roundRestarted', { round: 1, reason: 'hostDied', fromHost: 'h1' }],
    ['toolCall', { round: 1, callId: 'c2', tool: 'lookup', arguments: {}, costCHF: '0.07' }],
    ['agentSummary', { reason: 'completed', costCHF: '0.14', tokens: 80 }], ['complete', { reason: 'completed' }]]);
  assert.equal(c.costCHF, '0.42', 'the cut attempt\'s 0.28 and the new one\'s 0.14, exactly');
  assert.ok(!c.messages.some((m) => m.id === 'a'));
});

test('an approval request becomes a pending card that its decision closes, once', () => {
  const c = newConversation();
  const req = ['approvalRequested', { approvalId: 'ap1', callId: 'c1', tool: 'sendMail', external: 'mail', arguments: { to: 'a@example.com' }, reason: 'The user asked.' }];
  feed(c, [...start, req]);
  assert.equal(c.approvals.length, 1);
  assert.equal(c.approvals[0].status, 'pending');
  assert.equal(c.approvals[0].reason, 'The user asked.');
  applyEvent(c, { seq: 4, type: req[0], data: req[1] }); // the same request replayed after a reconnect under a new seq
  assert.equal(c.approvals.length, 1);
  applyEvent(c, { seq: 5, type: 'approvalDecided', data: { approvalId: 'ap1', decision: 'approved', edited: true, arguments: { to: 'b@example.com' } } });
  assert.equal(c.approvals[0].status, 'approved');
  assert.deepEqual(c.approvals[0].args, { to: 'b@example.com' });
  applyEvent(c, { seq: 6, type: 'approvalDecided', data: { approvalId: 'nope', decision: 'denied' } });
  assert.equal(c.approvals.length, 1);
});

test('costs are summed exactly', () => {
  const c = newConversation();
  let evs = [...start];
  for (let i = 0; i < 3; i++) {
    evs.push(['agentSummary', { reason: 'handedOff', costCHF: '0.1' }], ['roundRestarted', { round: 1, reason: 'hostDied' }]);
  }
  evs.push(['agentSummary', { reason: 'completed', costCHF: '0.000000001' }]);
  feed(c, evs);
  assert.equal(c.costCHF, '0.300000001');
});

const feed2 = (c, events) => events.forEach(([type, data]) => applyEvent(c, { seq: c.lastSeq + 1, type, data }));

test('degraded mode is flagged', () => {
  const c = newConversation();
  feed(c, [...start, ['status', { status: 'running', label: 'Knowledge store unavailable: answering without document context' }]]);
  assert.ok(c.degraded);
});

test('replayed events are applied once', () => {
  const c = newConversation();
  const evs = [...start, ['chunk', { messageId: 'a', text: 'Hel' }], ['chunk', { messageId: 'a', text: 'lo' }],
    ['toolCall', { callId: 'c1', tool: 'searchKnowledge', arguments: { query: 'x' } }], ['toolResult', { callId: 'c1', tool: 'searchKnowledge', ok: true, durationMs: 3 }]];
  feed(c, evs);
  // A reconnect replays from an older id, a reload from the start.
  for (const from of [2, 0]) {
    evs.slice(from).forEach(([type, data], i) => assert.equal(applyEvent(c, { seq: from + i + 1, type, data }), false));
  }
  assert.equal(c.messages.length, 2);
  assert.equal(c.byId.a.content, 'Hello');
  assert.equal(c.tools.length, 1);
  assert.equal(c.tools[0].result.durationMs, 3);
  // The final message replaces the streamed text instead of adding to it.
  applyEvent(c, { seq: evs.length + 1, type: 'message', data: { id: 'a', role: 'assistant', content: 'Hello.' } });
  assert.equal(c.byId.a.content, 'Hello.');
  assert.equal(c.messages.length, 2);
});

// walk flattens Preact vnodes to [type, props] and text.
function walk(nodes, out = []) {
  for (const n of [].concat(nodes)) {
    if (n == null || n === false) continue;
    if (typeof n === 'string' || typeof n === 'number') { out.push(['#text', String(n)]); continue; }
    if (Array.isArray(n)) { walk(n, out); continue; }
    out.push([n.type, n.props]);
    walk(n.props.children, out);
  }
  return out;
}

test('markdown from a model cannot inject markup or script', () => {
  const hostile = '<img src=x onerror="alert(1)"> <script>alert(2)</script>\n\n' +
    '[click](javascript:alert(3)) [data](data:text/html,<b>x</b>) [ok](https://example.org/a)\n\n' +
    '| a | <b>b</b> |\n|---|---|\n| `<i>` | **[c](vbscript:x)** |';
  const nodes = walk(markdown(hostile, () => {}));
  const types = new Set(nodes.map(([t]) => t));
  for (const bad of ['img', 'script', 'b', 'i', 'iframe']) assert.ok(!types.has(bad), 'rendered a <' + bad + '> element');
  const links = nodes.filter(([t]) => t === 'a').map(([, p]) => p.href);
  assert.deepEqual(links, ['https://example.org/a'], 'only the http(s) link is a link');
  const text = nodes.filter(([t]) => t === '#text').map(([, s]) => s).join('');
  assert.match(text, /<img src=x onerror="alert\(1\)">/, 'raw HTML shows as text');
  assert.ok(types.has('table') && types.has('code') && types.has('strong'));
  for (const [, p] of nodes) {
    if (p && typeof p === 'object') assert.ok(!('dangerouslySetInnerHTML' in p));
  }
});

test('citations become buttons that open the file at its page', () => {
  const opened = [];
  const nodes = walk(markdown('See [manual, p. 7](docItem:01a2-ff#page=7) and [file](file:abc).', (id, page) => opened.push([id, page])));
  const buttons = nodes.filter(([t, p]) => t === 'button' && p.class === 'cite');
  assert.equal(buttons.length, 2);
  buttons.forEach(([, p]) => p.onClick());
  assert.deepEqual(opened, [['01a2-ff', 7], ['abc', 0]]);
});

test('an unfinished code fence still renders while streaming', () => {
  const nodes = walk(markdown('Here:\n```go\nfunc main() {'));
  assert.ok(nodes.some(([t]) => t === 'pre'));
});

test('an edit proposal is shown once, and accepted by its fileVersion event', () => {
  const c = newConversation();
  const proposal = ['fileEditProposal', { proposalId: 'p1', fileId: 'f1', name: 'notes.md', description: 'fix', diff: '-a\n+b\n', baseVersion: 1 }];
  feed(c, [...start, proposal]);
  assert.equal(c.proposals.length, 1);
  assert.deepEqual([c.proposals[0].id, c.proposals[0].status, c.proposals[0].diff], ['p1', 'pending', '-a\n+b\n']);
  // A replay (reload, reconnect) adds nothing.
  applyEvent(c, { seq: 3, type: proposal[0], data: proposal[1] });
  assert.equal(c.proposals.length, 1);
  applyEvent(c, { seq: 4, type: 'fileVersion', data: { fileId: 'f9', version: 2 } });
  assert.equal(c.proposals[0].status, 'pending', 'a version of another file changes nothing');
  applyEvent(c, { seq: 5, type: 'fileVersion', data: { proposalId: 'p1', fileId: 'f1', version: 2 } });
  assert.equal(c.proposals[0].status, 'accepted');
  assert.equal(c.proposals[0].version, 2);
});

test('the OAuth callback\'s outcome is read from the URL, and only from its parameters', () => {
  const cases = [
    { q: '', want: null },
    { q: '?other=1', want: null },
    { q: '?connection=ok', want: { ok: true, reason: '', provider: '' } },
    { q: '?connection=ok&provider=google', want: { ok: true, reason: '', provider: 'google' } },
    { q: '?connection=error&reason=access_denied%3A+refused', want: { ok: false, reason: 'access_denied: refused', provider: '' } },
    // Anything but ok is a failure; a provider's own error names are read too.
    { q: '?connection=maybe', want: { ok: false, reason: '', provider: '' } },
    { q: '?connection=error&error=invalid_grant&error_description=code+used', want: { ok: false, reason: 'code used', provider: '' } },
    { q: '?connection=error&reason=' + 'x'.repeat(1000), want: { ok: false, reason: 'x'.repeat(300), provider: '' } },
  ];
  for (const tc of cases) assert.deepEqual(callbackNotice(tc.q), tc.want, tc.q);
});

test('a connection\'s state: revoked, expired or active', () => {
  const now = Date.parse('2026-11-26T10:00:00Z');
  assert.equal(connectionState({ revoked: true, expiresAt: '2027-01-01T00:00:00Z' }, now), 'revoked');
  assert.equal(connectionState({ revoked: false, expiresAt: '2026-11-26T09:59:59Z' }, now), 'expired');
  assert.equal(connectionState({ revoked: false, expiresAt: '2026-11-26T10:00:01Z' }, now), 'active');
  assert.equal(connectionState({ revoked: false }, now), 'active');
  // A connection whose check failed (issue 28: an unreachable Jira site with
  // a made-up token was listed active) is failed, unless revoked.
  assert.equal(connectionState({ revoked: false, status: 'failed', lastError: 'dial tcp: connection refused' }, now), 'failed');
  assert.equal(connectionState({ revoked: true, status: 'failed' }, now), 'revoked');
  assert.equal(connectionState({ revoked: false, status: 'checked' }, now), 'active');
});

test('the browser is sent to an http(s) authorisation URL only', () => {
  assert.equal(safeRedirect('https://login.example/authorize?state=s'), 'https://login.example/authorize?state=s');
  for (const bad of ['javascript:alert(1)', 'data:text/html,x', '/relative', '', undefined, null]) assert.equal(safeRedirect(bad), '', String(bad));
});

test('branches: an edit and a regeneration are siblings, the selected branch is shown', () => {
  const c = newConversation();
  const msg = (id, role, parent, round) => ['message', { id, role, status: role === 'user' ? 'first' : 'last', parentMessageId: parent, round, content: id }];
  feed(c, [['status', { status: 'running' }], msg('u1', 'user', '', 1), msg('a1', 'assistant', 'u1', 1), ['complete', {}],
    ['status', { status: 'running' }], msg('u2', 'user', 'a1', 2), msg('a2', 'assistant', 'u2', 2), ['complete', {}],
    // the second prompt edited: a sibling of u2, and selected
    ['status', { status: 'running' }], msg('u2b', 'user', 'a1', 3), ['branchSelected', { messageId: 'u2b' }], msg('a2b', 'assistant', 'u2b', 3), ['complete', {}]]);
  const ids = () => shown(c).map((x) => x.m.id).join(' ');
  assert.equal(ids(), 'u1 a1 u2b a2b');
  const u2b = shown(c).find((x) => x.m.id === 'u2b');
  assert.deepEqual([u2b.index, u2b.siblings], [1, ['u2', 'u2b']]);
  applyEvent(c, { seq: 100, type: 'branchSelected', data: { messageId: 'u2' } });
  assert.equal(ids(), 'u1 a1 u2 a2');
  // Regenerating a2: while the round runs, a2 gives way to the stream.
  feed2(c, [['status', { status: 'running' }], ['branchSelected', { messageId: 'u2' }], ['chunk', { messageId: 'a2c', text: 'new' }]]);
  assert.equal(ids(), 'u1 a1 u2 a2c');
  feed2(c, [msg('a2c', 'assistant', 'u2', 4), ['complete', {}]]);
  assert.equal(ids(), 'u1 a1 u2 a2c');
  const a2c = shown(c).find((x) => x.m.id === 'a2c');
  assert.deepEqual([a2c.index, a2c.siblings.length], [1, 2]);
  // An edit of the first prompt is a second root.
  feed2(c, [['status', { status: 'running' }], ['message', { id: 'u1b', role: 'user', status: 'first', root: true, content: 'u1b' }],
    ['branchSelected', { messageId: 'u1b' }], msg('a1c', 'assistant', 'u1b', 5), ['complete', {}]]);
  assert.equal(ids(), 'u1b a1c');
  assert.equal(shown(c)[0].siblings.join(' '), 'u1 u1b');
  // Messages stored before branches (no parent) stay one line.
  const old = newConversation();
  feed(old, [['message', { id: 'x', role: 'user', status: 'first', content: 'x' }], ['message', { id: 'y', role: 'assistant', status: 'last', content: 'y' }],
    ['message', { id: 'z', role: 'user', status: 'first', content: 'z' }]]);
  assert.equal(shown(old).map((x) => x.m.id).join(' '), 'x y z');
});

test('feedback on an answer follows its events', () => {
  const c = newConversation();
  feed(c, [['message', { id: 'a', role: 'assistant', status: 'last', content: 'x' }], ['messageFeedback', { messageId: 'a', rating: 'unhelpful', note: 'wrong page' }]]);
  assert.deepEqual(c.byId.a.feedback, { rating: 'unhelpful', note: 'wrong page' });
  applyEvent(c, { seq: 9, type: 'messageFeedback', data: { messageId: 'a', rating: '' } });
  assert.equal(c.byId.a.feedback, null);
});

// searchKnowledge's result text, as plugins/documents writes it: "n. name
// (file id) where, score s" and the passage under it.
test('a citation finds its passage in the conversation\'s search results', () => {
  const tools = [
    { tool: 'readContentObjects', result: { ok: true, content: '1. x (file f1) page 2, score 1\nnot a search' } },
    { tool: 'searchKnowledge', result: { ok: false, content: '1. x (file f1) page 2, score 1\nfailed call' } },
    { tool: 'searchKnowledge', result: { ok: true, content: '1. a.pdf (file f1) page 3, score 0.9\nthird page text\nmore of it\n\n2. a.pdf (file f1) page 2, score 0.5\nsecond page text\n\n3. b.pdf (file f2) page 2, score 0.4\nother file' } },
  ];
  const cases = [
    { file: 'f1', page: 2, want: 'second page text' },
    { file: 'f1', page: 3, want: 'third page text\nmore of it' },
    { file: 'f2', page: 2, want: 'other file' },
    { file: 'f1', page: 12, want: '' }, // page 12 is not page 2's prefix
    { file: 'f3', page: 2, want: '' },
  ];
  for (const c of cases) assert.equal(citedPassage(tools, c.file, c.page), c.want, `${c.file} p${c.page}`);
});

test('the passage is found in the page\'s text items, however they are split', () => {
  // pdf.js gives a page's text in pieces: runs of a line, hyphens at line
  // ends, ligatures as one character.
  const items = ['Chapter 5', 'Typically, Git is used as the VCS to re-', 'cord the Debian packaging', 'activity with the fol', 'lowing branches.', 'Something else entirely on the page.']
    .map((str) => ({ str }));
  const cases = [
    { name: 'across items and a hyphen', passage: 'Git is used as the VCS to record the Debian packaging activity', want: [1, 2, 3] },
    { name: 'other spacing and case', passage: 'typically,   GIT is used\nas the vcs', want: [1] },
    { name: 'a ligature', passage: 'the ﬁle is not here at all, nothing matches', want: [] },
    { name: 'nothing', passage: '', want: [] },
  ];
  for (const c of cases) assert.deepEqual([...passageItems(items, c.passage)].sort(), c.want, c.name);
});

test('the ranges pdf.js asks for at once are read in few fetches, near ones together', () => {
  const K = 32 << 10;
  const r = (c, n = 1) => ({ begin: c * K, end: (c + n) * K });
  const cases = [
    { name: 'adjacent chunks, asked for out of order', queue: [r(5), r(3), r(4)], want: [[3 * K, 6 * K, 3]] },
    { name: 'a gap of two chunks is read through', queue: [r(0), r(3)], want: [[0, 4 * K, 2]] },
    { name: 'a wider gap is not', queue: [r(0), r(4)], want: [[0, K, 1], [4 * K, 5 * K, 1]] },
    { name: 'one fetch spans at most 16 chunks', queue: [r(0, 10), r(10, 10)], want: [[0, 10 * K, 1], [10 * K, 20 * K, 1]] },
    { name: 'a range inside another', queue: [r(0, 4), r(1)], want: [[0, 4 * K, 2]] },
    { name: 'the last chunk, shorter', queue: [r(7), { begin: 8 * K, end: 8 * K + 100 }], want: [[7 * K, 8 * K + 100, 2]] },
  ];
  for (const c of cases) {
    const got = [];
    const q = c.queue.slice();
    while (q.length) {
      const { begin, end, group } = takeRanges(q);
      // Every range asked for is inside its fetch.
      for (const g of group) assert.ok(g.begin >= begin && g.end <= end, c.name);
      got.push([begin, end, group.length]);
    }
    assert.deepEqual(got, c.want, c.name);
  }
});

test('notifications are worded by kind and state, and lead to their place', () => {
  const en = { backgroundJob_completed: 'Background job “{name}” completed', approval_pending: '“{name}” waits for your approval', other: '{name}' };
  assert.equal(noticeText(en, { kind: 'backgroundJob', status: 'completed', name: 'Sum up' }), 'Background job “Sum up” completed');
  assert.equal(noticeText(en, { kind: 'approval', status: 'pending', name: 'sendMail' }), '“sendMail” waits for your approval');
  // A state this page does not know yet still says what it is about.
  assert.equal(noticeText(en, { kind: 'sync', status: 'paused', name: 'Jira PROJ' }), 'Jira PROJ');
  // A name holding markup is text: the template takes it as it is.
  assert.equal(noticeText(en, { kind: 'approval', status: 'pending', name: '<img src=x>' }), '“<img src=x>” waits for your approval');
  assert.equal(noticeTarget({ kind: 'approval', workspaceId: 'w 1', workflowId: 'c/2' }), '/w/w%201/c/c%2F2');
  assert.equal(noticeTarget({ kind: 'sync', workspaceId: 'w1' }), '/w/w1/sources');
  assert.equal(noticeTarget({ kind: 'backgroundJob', workspaceId: 'w1' }), '/w/w1');
  assert.equal(noticeTarget({ kind: 'backgroundJob' }), '');
});

test('only unread notifications not seen before are announced, oldest first', () => {
  const page = { items: [{ id: 'c' }, { id: 'b', readAt: '2026-12-04T00:00:00Z' }, { id: 'a' }, { id: 'z' }], unread: 3 };
  assert.deepEqual(fresh(new Set(['z']), page).map((n) => n.id), ['a', 'c']);
  assert.deepEqual(fresh(new Set(['a', 'b', 'c', 'z']), page), []);
});

test('the notification stream is read event by event across chunks', () => {
  const got = [];
  const on = (e) => got.push(e);
  let rest = parseSSE(': connected\n\nevent: notifications\ndata: {"unread":1,', on);
  assert.deepEqual(got, []);
  rest = parseSSE(rest + '"items":[]}\n\n: ping\n\nevent: notifications\ndata: {"unread"', on);
  assert.deepEqual(got, [{ type: 'notifications', data: '{"unread":1,"items":[]}' }]);
  rest = parseSSE(rest + ':2}\n\n', on);
  assert.equal(rest, '');
  assert.deepEqual(got.map((e) => JSON.parse(e.data).unread), [1, 2]);
});

test('the export: the branch shown, its citations numbered with their pages, and its rounds\' tool calls', () => {
  const c = newConversation();
  const msg = (id, role, parent, round, content, extra = {}) => ['message', { id, role, status: role === 'user' ? 'first' : 'last', parentMessageId: parent, round, content, ...extra }];
  feed(c, [['status', { status: 'running' }], msg('u1', 'user', '', 1, 'Was sagt das Handbuch über Größen?'),
    ['toolCall', { round: 1, callId: 'c1', tool: 'searchKnowledge', arguments: { query: 'Größe' } }],
    ['toolResult', { round: 1, callId: 'c1', tool: 'searchKnowledge', ok: true, durationMs: 12 }],
    msg('a1', 'assistant', 'u1', 1, 'Das **Handbuch** nennt drei [Größen, S. 4](docItem:f1#page=4) und [noch eine](docItem:f1#page=4).\n\n' +
      '| Größe | Wert |\n|---|---|\n| a | `1` |\n\n- erstens\n- zweitens\n\n```\ncode bleibt\n```'), ['complete', {}],
    // a regenerated answer, not the one selected: neither it nor its tools are exported
    ['status', { status: 'running' }],
    ['toolCall', { round: 2, callId: 'c2', tool: 'webFetch', arguments: { url: 'https://example.com' } }],
    ['toolResult', { round: 2, callId: 'c2', tool: 'webFetch', ok: false, error: 'refused' }],
    msg('a1b', 'assistant', 'u1', 2, 'The other answer', { documents: [{ fileId: 'f2', name: 'other.pdf' }] }), ['complete', {}],
    ['branchSelected', { messageId: 'a1' }]]);
  const t = (k) => ({ you: 'You', assistant: 'Agent', sources: 'Sources', exportTools: 'Tool activity', exportNoTools: 'No tool was called.',
    exportRound: 'Round', exportPage: 'page', failed: 'failed', exportFile: 'file' })[k];
  const o = outline(c, 'Größen', t, { f1: 'handbuch.pdf' });
  assert.equal(o.title, 'Größen');
  assert.deepEqual(o.blocks, [
    { type: 'heading', level: 2, text: 'You' },
    { type: 'paragraph', text: 'Was sagt das Handbuch über Größen?' },
    { type: 'heading', level: 2, text: 'Agent' },
    { type: 'paragraph', text: 'Das Handbuch nennt drei Größen, S. 4 [1] und noch eine [1].' },
    { type: 'table', rows: [['Größe', 'Wert'], ['a', '1']] },
    { type: 'list', ordered: false, items: ['erstens', 'zweitens'] },
    { type: 'paragraph', text: 'code bleibt' },
    { type: 'heading', level: 3, text: 'Sources' },
    { type: 'list', ordered: true, items: ['handbuch.pdf, page 4 (file f1)'] },
    { type: 'heading', level: 2, text: 'Tool activity' },
    { type: 'list', items: ['Round 1: searchKnowledge {"query":"Größe"}: ok, 12 ms'] },
  ]);
  // The other branch, selected: its answer, its attached document and its failed call.
  applyEvent(c, { seq: 100, type: 'branchSelected', data: { messageId: 'a1b' } });
  const o2 = outline(c, 'x', t);
  assert.match(toMarkdown(o2), /## Agent\n\nThe other answer\n\n### Sources\n\n1\. other\.pdf \(file f2\)\n\n## Tool activity\n\n- Round 2: webFetch \{"url":"https:\/\/example\.com"\}: failed: refused\n/);
  assert.doesNotMatch(toMarkdown(o2), /searchKnowledge|Handbuch nennt/);
  assert.equal(fileName('a/b: "c"'), 'a_b_ _c_');
});

test('files filtered by when they were uploaded', () => {
  const now = new Date(2026, 11, 4, 15, 0);
  const at = (d, h = 12) => ({ createdAt: new Date(2026, 11, d, h).toISOString() });
  const cases = [
    { name: 'this morning', f: at(4, 1), in: ['', 'today', 'week', 'month'] },
    { name: 'yesterday evening', f: at(3, 23), in: ['', 'week', 'month'] },
    { name: 'ten days ago', f: { createdAt: new Date(2026, 10, 24, 12).toISOString() }, in: ['', 'month'] },
    { name: 'in the spring', f: { createdAt: new Date(2026, 3, 1).toISOString() }, in: ['', 'older'] },
    { name: 'no date', f: {}, in: ['', 'older'] },
  ];
  for (const tc of cases) {
    for (const p of ['', 'today', 'week', 'month', 'older']) {
      assert.equal(inPeriod(tc.f, p, now), tc.in.includes(p), `${tc.name} in ${p || 'any time'}`);
    }
  }
});
