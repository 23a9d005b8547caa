// A message's actions in the chat (docs/ui.md): copy; for a prompt, edit
// and send again (a new branch beside it); for an answer, regenerate (a new
// branch of answers) and feedback (helpful or not, with a note); and, where
// a turn has siblings, moving between the branches. What changes arrives
// back as events (branchSelected, messageFeedback, the new round), so every
// tab shows the same.
import { h } from './preact.mjs';
import { useState } from './preact-hooks.mjs';
import htm from './htm.mjs';

const html = htm.bind(h);

// copyText puts text on the clipboard; without the Clipboard API (an
// insecure origin), or when the browser refuses it, it selects a hidden
// textarea and copies that.
async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try { return await navigator.clipboard.writeText(text); } catch { /* the fallback below */ }
  }
  const ta = document.createElement('textarea');
  ta.value = text; ta.setAttribute('readonly', ''); ta.style.position = 'fixed'; ta.style.opacity = '0';
  document.body.appendChild(ta); ta.select();
  let ok = false;
  try { ok = document.execCommand('copy'); } finally { ta.remove(); }
  if (!ok) throw new Error('the browser does not allow copying here');
}

// EditPrompt is a sent prompt being edited: send runs it again as a new
// branch (editOf), cancel leaves everything as it was.
export function EditPrompt({ t, text, onSend, onCancel }) {
  const [v, setV] = useState(text);
  const submit = (e) => { e.preventDefault(); if (v.trim()) onSend(v); };
  return html`<form class="edit-prompt" onSubmit=${submit} data-testid="edit-prompt">
    <label class="sr-only" for="edit-prompt-text">${t('editPrompt')}</label>
    <textarea id="edit-prompt-text" rows="3" value=${v} onInput=${(e) => setV(e.target.value)}
      onKeyDown=${(e) => { if (e.key === 'Escape') onCancel(); if (e.key === 'Enter' && !e.shiftKey) submit(e); }}></textarea>
    <div class="actions"><button type="submit" data-testid="edit-send">${t('sendEdited')}</button>
      <button type="button" onClick=${onCancel}>${t('cancel')}</button></div>
  </form>`;
}

// readOnly (another member's shared conversation) leaves copying only.
export function MessageActions({ t, api, wf, item, running, readOnly, onEdit }) {
  const { m, index, siblings } = item;
  const [note, setNote] = useState(null); // null: no note form
  const [msg, setMsg] = useState('');
  const [err, setErr] = useState('');
  const act = async (f) => { setErr(''); try { await f(); } catch (e) { setErr(e.message); } };
  const select = (id) => act(() => api('PUT', `/workflows/${encodeURIComponent(wf)}/branch`, { messageId: id }));
  const rate = (rating, text) => act(async () => {
    await api('PUT', `/workflows/${encodeURIComponent(wf)}/messages/${encodeURIComponent(m.id)}/feedback`, { rating, note: text || '' });
    setNote(null); setMsg(rating ? t('feedbackThanks') : '');
  });
  const copy = () => act(async () => { await copyText(m.content); setMsg(t('copied')); });
  const answer = m.role === 'assistant' && m.status === 'last';
  const prompt = m.role === 'user' && m.status === 'first';
  if (m.streaming || (!answer && !prompt)) return null;
  const fb = m.feedback && m.feedback.rating;
  return html`<div class="msg-actions" data-testid="msg-actions">
    ${siblings.length > 1 && !readOnly && html`<span class="branches" data-testid="branches">
      <button type="button" disabled=${index <= 0 || running} aria-label=${t('prevBranch')} onClick=${() => select(siblings[index - 1])}>‹</button>
      <span>${t('branchOf').replace('{i}', index + 1).replace('{n}', siblings.length)}</span>
      <button type="button" disabled=${index >= siblings.length - 1 || running} aria-label=${t('nextBranch')} onClick=${() => select(siblings[index + 1])}>›</button></span>`}
    <button type="button" onClick=${copy} data-testid="copy">${t('copy')}</button>
    ${prompt && !readOnly && html`<button type="button" disabled=${running} onClick=${onEdit} data-testid="edit">${t('edit')}</button>`}
    ${answer && !readOnly && html`<button type="button" disabled=${running} data-testid="regenerate"
      onClick=${() => act(() => api('POST', `/workflows/${encodeURIComponent(wf)}/messages/${encodeURIComponent(m.id)}/regenerate`))}>${t('regenerate')}</button>
      <button type="button" aria-pressed=${fb === 'helpful'} data-testid="helpful" onClick=${() => rate(fb === 'helpful' ? '' : 'helpful')}>${t('helpful')}</button>
      <button type="button" aria-pressed=${fb === 'unhelpful'} data-testid="unhelpful" onClick=${() => (fb === 'unhelpful' ? rate('') : setNote(''))}>${t('unhelpful')}</button>`}
    ${note !== null && html`<form class="feedback-note" onSubmit=${(e) => { e.preventDefault(); rate('unhelpful', note); }}>
      <label for=${'fb-' + m.id}>${t('feedbackNote')}</label>
      <input id=${'fb-' + m.id} value=${note} maxlength="4000" onInput=${(e) => setNote(e.target.value)} data-testid="feedback-note" />
      <button type="submit" data-testid="feedback-send">${t('send')}</button>
      <button type="button" onClick=${() => setNote(null)}>${t('cancel')}</button></form>`}
    ${fb === 'unhelpful' && m.feedback.note && html`<span class="muted" data-testid="feedback-shown">${m.feedback.note}</span>`}
    ${msg && html`<span class="muted" role="status">${msg}</span>`}
    ${err && html`<span class="error" role="alert">${err}</span>`}
  </div>`;
}
