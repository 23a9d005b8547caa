// The conversation model: a workflow's state built from its events only
// (messages, streamed chunks, tool calls with their results, progress,
// files made, edits proposed, the run's end). applyEvent applies each event once: an event at or below the
// last applied sequence number (a replay after a reconnect or a reload) is
// ignored, so nothing shows twice. Pure: no DOM, so node tests it.

export function newConversation() {
  return { lastSeq: 0, messages: [], byId: {}, tools: [], toolsById: {}, status: '', reason: '', label: '',
    degraded: false, cost: 0, tokens: 0, rounds: 0, files: [], proposals: [], error: '',
    // What attempts of the current round cut by a host's stop cost
    // (roundRestarted): the new attempt's progress counts from zero.
    priorCost: 0, priorTokens: 0, restarts: 0 };
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
      if (m) { m.content = d.content; m.role = d.role; m.streaming = false; m.documents = d.documents || []; }
      else { const n = { id: d.id, role: d.role, content: d.content, documents: d.documents || [], seq: e.seq }; c.byId[d.id] = n; c.messages.push(n); }
      break;
    }
    case 'chunk': {
      let m = c.byId[d.messageId];
      if (!m) { m = { id: d.messageId, role: 'assistant', content: '', documents: [], streaming: true, seq: e.seq }; c.byId[d.messageId] = m; c.messages.push(m); }
      if (m.streaming) m.content += d.text;
      break;
    }
    case 'status':
      c.status = d.status || c.status;
      c.label = d.label || '';
      // The workspace's degraded-mode label (host/workspace): the round
      // answers without the knowledge store.
      if (/^Knowledge store unavailable/.test(d.label || '')) c.degraded = true;
      if (d.status === 'running') { c.reason = ''; c.error = ''; c.priorCost = 0; c.priorTokens = 0; }
      break;
    // The round runs again from its request on another host (its host
    // stopped): the answer the cut attempt was streaming never ends, so
    // it is dropped, and what that attempt cost is carried over.
    case 'roundRestarted': {
      c.messages = c.messages.filter((m) => !m.streaming);
      for (const id of Object.keys(c.byId)) if (c.byId[id].streaming) delete c.byId[id];
      c.priorCost = c.cost; c.priorTokens = c.tokens; c.restarts++;
      break;
    }
    case 'toolCall': {
      const t = { id: d.callId, tool: d.tool, round: d.round, args: d.arguments, result: null, seq: e.seq };
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
      c.cost = c.priorCost + d.costCHF; c.tokens = c.priorTokens + d.tokens; c.rounds = d.round; c.maxRounds = d.maxRounds || 0;
      break;
    case 'agentSummary':
      c.cost = c.priorCost + d.costCHF; c.tokens = c.priorTokens + d.tokens; c.rounds = d.rounds;
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
