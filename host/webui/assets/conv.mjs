// The conversation model: a workflow's state built from its events only
// (messages, streamed chunks, tool calls with their results, progress,
// files made, edits proposed, the run's end). applyEvent applies each event once: an event at or below the
// last applied sequence number (a replay after a reconnect or a reload) is
// ignored, so nothing shows twice. Pure: no DOM, so node tests it.

// Costs arrive as exact decimal strings ("0.42"); they are summed as
// nano-francs (host/money's unit) in BigInt, so no sum drifts, and shown
// from costCHF.
const NANO = 1000000000n;
export function nanoCHF(v) {
  const s = String(v ?? '0').trim();
  const m = /^(-?)(\d*)(?:\.(\d{0,9})\d*)?$/.exec(s);
  if (!m) return 0n;
  const n = BigInt(m[2] || '0') * NANO + BigInt((m[3] || '').padEnd(9, '0'));
  return m[1] ? -n : n;
}
export function formatCHF(n) {
  const neg = n < 0n; if (neg) n = -n;
  let frac = (n % NANO).toString().padStart(9, '0').replace(/0+$/, '');
  while (frac.length < 2) frac += '0';
  return (neg ? '-' : '') + (n / NANO).toString() + '.' + frac;
}

export function newConversation() {
  return { lastSeq: 0, messages: [], byId: {}, tools: [], toolsById: {}, status: '', reason: '', label: '',
    degraded: false, cost: 0, costCHF: '0.00', tokens: 0, rounds: 0, files: [], proposals: [], approvals: [], error: '', model: '',
    // What attempts of the current round cut by a host's stop cost
    // (roundRestarted), in nano-francs: the new attempt's progress counts
    // from zero.
    priorNano: 0n, nano: 0n, priorTokens: 0, restarts: 0,
    // The branch shown runs through this turn ('' is the newest branch);
    // runSeq is where the running round began (its status event).
    branch: '', runSeq: 0 };
}

// setCost sets the round's cost from the current attempt's running total.
function setCost(c, costCHF) {
  if (costCHF === undefined || costCHF === null || costCHF === '') return;
  c.nano = c.priorNano + nanoCHF(costCHF);
  c.costCHF = formatCHF(c.nano);
  c.cost = Number(c.costCHF);
}

// The reasons an agent run ends early that the UI names: both end the run with an
// account of its progress, not an error (docs/agent.md#design-decisions).
const earlyEnds = new Set(['budgetExceeded', 'maxRoundsReached']);

// runLabel is the i18n key of the run's state: why it ended early when it
// did, else its status.
export function runLabel(c) {
  return c.reason || c.status;
}

export function applyEvent(c, e) {
  if (!(e.seq > c.lastSeq)) return false;
  c.lastSeq = e.seq;
  const d = e.data || {};
  switch (e.type) {
    case 'message': {
      const m = c.byId[d.id];
      const fields = { role: d.role, content: d.content, documents: d.documents || [], status: d.status || '', parent: d.parentMessageId || '',
        round: d.round || 0, root: !!d.root, feedback: d.feedback && d.feedback.rating ? d.feedback : null };
      // A streamed answer is stored with the seq of its `message` event:
      // the tree orders turns by when they were stored.
      if (m) { Object.assign(m, fields, { streaming: false, seq: e.seq }); }
      else { const n = { id: d.id, ...fields, seq: e.seq }; c.byId[d.id] = n; c.messages.push(n); }
      break;
    }
    case 'branchSelected':
      c.branch = d.messageId || '';
      break;
    case 'messageFeedback': {
      const m = c.byId[d.messageId];
      if (m) m.feedback = d.rating ? { rating: d.rating, note: d.note || '' } : null;
      break;
    }
    case 'chunk': {
      let m = c.byId[d.messageId];
      if (!m) { m = { id: d.messageId, role: 'assistant', content: '', documents: [], streaming: true, seq: e.seq }; c.byId[d.messageId] = m; c.messages.push(m); }
      if (m.streaming) m.content += d.text;
      break;
    }
    case 'status':
      // A new run counts its model steps from none: the last run's count
      // is no step of this one.
      if (d.status === 'running' && c.status !== 'running') { c.runSeq = e.seq; c.rounds = 0; }
      c.status = d.status || c.status;
      c.label = d.label || '';
      // The workspace's degraded-mode label (host/workspace): the round
      // answers without the knowledge store.
      if (/^Knowledge store unavailable/.test(d.label || '')) c.degraded = true;
      if (d.status === 'running') { c.reason = ''; c.error = ''; c.priorNano = 0n; c.priorTokens = 0; }
      break;
    // The round runs again from its request on another host (its host
    // stopped): the answer the cut attempt was streaming never ends, so
    // it is dropped, and what that attempt cost is carried over.
    case 'roundRestarted': {
      c.messages = c.messages.filter((m) => !m.streaming);
      for (const id of Object.keys(c.byId)) if (c.byId[id].streaming) delete c.byId[id];
      c.priorNano = c.nano; c.priorTokens = c.tokens; c.restarts++;
      break;
    }
    case 'toolCall': {
      const t = { id: d.callId, tool: d.tool, round: d.round, args: d.arguments, result: null, seq: e.seq };
      // The cost of the model call that asked for the tool: a round cut
      // while its tools run has shown it, as it was billed.
      setCost(c, d.costCHF);
      c.toolsById[d.callId] = t;
      c.tools.push(t);
      break;
    }
    case 'toolResult': {
      let t = c.toolsById[d.callId];
      if (!t) { t = { id: d.callId, tool: d.tool, round: d.round, args: null }; c.toolsById[d.callId] = t; c.tools.push(t); }
      t.result = d;
      break;
    }
    case 'agentProgress':
      setCost(c, d.costCHF); c.tokens = c.priorTokens + d.tokens; c.rounds = d.round; c.maxRounds = d.maxRounds || 0;
      if (d.model) c.model = d.model;
      break;
    case 'agentSummary':
      setCost(c, d.costCHF); c.tokens = c.priorTokens + d.tokens; c.rounds = d.rounds;
      if (d.model) c.model = d.model;
      if (earlyEnds.has(d.reason)) c.reason = d.reason;
      break;
    case 'fileCreated':
      c.files.push(d);
      break;
    // An edit the agent proposes, for the user to accept or reject; its
    // fileVersion event (on accepting) marks it accepted.
    case 'fileEditProposal':
      c.proposals.push({ id: d.proposalId, fileId: d.fileId, name: d.name, description: d.description || '', diff: d.diff || '',
        baseVersion: d.baseVersion || 0, status: 'pending' });
      break;
    case 'fileVersion': {
      const p = d.proposalId && c.proposals.find((x) => x.id === d.proposalId);
      if (p) { p.status = 'accepted'; p.version = d.version || 0; }
      break;
    }
    // A tool call that waits for the person's approval (the workspace's
    // policy says ask); approvalDecided marks it approved, denied or
    // expired, on whichever host or tab it was decided.
    case 'approvalRequested':
      if (!c.approvals.some((a) => a.id === d.approvalId)) {
        c.approvals.push({ id: d.approvalId, callId: d.callId, tool: d.tool, external: d.external || '', args: d.arguments,
          reason: d.reason || '', expiresAt: d.expiresAt || '', status: 'pending' });
      }
      break;
    case 'approvalDecided': {
      const a = c.approvals.find((x) => x.id === d.approvalId);
      if (a) { a.status = d.decision; a.decisionReason = d.reason || ''; a.edited = !!d.edited; if (d.edited) a.args = d.arguments; }
      break;
    }
    case 'complete':
    case 'stopped':
      c.status = e.type === 'complete' ? 'completed' : 'stopped';
      if (earlyEnds.has(d.reason)) c.reason = d.reason;
      for (const m of c.messages) m.streaming = false;
      break;
    case 'error':
      c.status = 'failed'; c.error = d.message || '';
      for (const m of c.messages) m.streaming = false;
      break;
  }
  return true;
}

// The conversation's tree (docs/agent.md#branches-and-feedback), the same
// rules as the server's (host/workflows/branch.go): a turn is a prompt or
// the answer that ends a round; each follows its parent, or, stored
// without one (or with one that is gone), the turn stored before it unless
// it is marked as starting the conversation (root).
const isTurn = (m) => (m.role === 'user' && m.status === 'first') || (m.role === 'assistant' && m.status === 'last');

export function tree(c) {
  const turns = c.messages.filter((m) => !m.streaming && isTurn(m)).sort((a, b) => a.seq - b.seq);
  const byId = {}, parent = {}, children = { '': [] };
  let prev = '';
  for (const m of turns) {
    const p = m.parent && byId[m.parent] ? m.parent : m.root ? '' : prev;
    byId[m.id] = m; parent[m.id] = p;
    (children[p] = children[p] || []).push(m.id);
    prev = m.id;
  }
  return { byId, parent, children };
}

// path is the branch through selected: its ancestors, itself and below it
// the newest turn at each step; the newest branch when nothing (or
// nothing known) is selected.
export function path(tr, selected) {
  const up = [];
  for (let id = selected, n = 0; id && tr.byId[id] && n <= Object.keys(tr.byId).length; id = tr.parent[id], n++) up.unshift(tr.byId[id]);
  let cur = up.length ? selected : '';
  for (let n = 0; n <= Object.keys(tr.byId).length; n++) {
    const kids = tr.children[cur] || [];
    if (!kids.length) break;
    cur = kids[kids.length - 1];
    up.push(tr.byId[cur]);
  }
  return up;
}

// shown lists what the chat shows: the shown branch's turns, each with its
// place among its siblings, the other messages of those turns' rounds, and
// at the end what is still streaming. While a round regenerates an
// answer, the answer it replaces is not shown.
export function shown(c) {
  const tr = tree(c);
  let turns = path(tr, c.branch);
  const last = turns[turns.length - 1];
  if (c.status === 'running' && last && last.role === 'assistant' && last.seq < c.runSeq) turns = turns.slice(0, -1);
  const rounds = new Set(turns.map((m) => m.round));
  const inPath = new Set(turns.map((m) => m.id));
  const out = [];
  for (const m of c.messages) {
    if (m.streaming) continue;
    if (inPath.has(m.id)) {
      const sib = tr.children[tr.parent[m.id]] || [m.id];
      out.push({ m, index: sib.indexOf(m.id), siblings: sib });
    } else if (!isTurn(m) && m.status && rounds.has(m.round)) out.push({ m, index: 0, siblings: [m.id] });
  }
  for (const m of c.messages) if (m.streaming) out.push({ m, index: 0, siblings: [m.id] });
  return out;
}

// citedPassage finds the passage a citation of (file, page) stands for in
// the conversation's searchKnowledge results ("n. name (file id) page p,
// score s" and the passage's text under it), so the preview can mark it.
export function citedPassage(tools, fileId, page) {
  for (const c of tools || []) {
    if (c.tool !== 'searchKnowledge' || !c.result || !c.result.ok) continue;
    for (const part of String(c.result.content || '').split(/\n(?=\d+\. )/)) {
      const nl = part.indexOf('\n');
      if (nl < 0) continue;
      const head = part.slice(0, nl);
      if (!head.includes(`(file ${fileId})`)) continue;
      const pg = /\bpage (\d+)/.exec(head);
      if (page && (!pg || Number(pg[1]) !== page)) continue;
      return part.slice(nl + 1).trim();
    }
  }
  return '';
}
