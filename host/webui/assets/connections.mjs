// The Connections view: the signed-in user's connections to external
// providers (docs/connectors.md), connecting an OAuth provider (the browser
// goes to the provider and comes back through the server's callback), adding
// a token or password connection, and revoking one. A secret typed here goes
// to the server once and is never kept in the page's state nor shown back:
// the API never answers one. app.mjs loads this module when the view is
// first opened.
import { h } from './preact.mjs';
import { useState, useEffect, useRef } from './preact-hooks.mjs';
import htm from './htm.mjs';

const html = htm.bind(h);

// maxReason bounds the callback's reason as shown.
const maxReason = 300;

// callbackNotice reads the outcome the OAuth callback put in the URL it sent
// the browser back to (?connection=ok, or ?connection=error&reason=…), or
// null when there is none. Anything but "ok" is a failure.
export function callbackNotice(search) {
  const q = new URLSearchParams(search);
  if (!q.has('connection')) return null;
  const ok = q.get('connection') === 'ok';
  const reason = (q.get('reason') || q.get('error_description') || q.get('error') || '').slice(0, maxReason);
  return { ok, reason, provider: (q.get('provider') || '').slice(0, 60) };
}

// reasonText explains a reason code the server's callback names (connErr_*
// in i18n.mjs); anything else (a provider's own words) is shown as written.
function reasonText(t, reason) {
  const key = 'connErr_' + reason;
  const text = t(key);
  return text === key ? reason : text;
}

// withCode shows a server's message with its `backticked` commands as
// code, not as raw Markdown backticks.
export function withCode(text) {
  return String(text || '').split('`').map((part, i) => (i % 2 ? html`<code>${part}</code>` : part));
}

// connectionState is what a connection can do now: revoked (connect again),
// failed (trying it when it was made, or its last use, failed: lastError
// says why, e.g. a site that does not answer or a token the provider
// refuses), expired (its access ended; an OAuth connection is renewed on
// its next use when the provider still allows it) or active.
export function connectionState(c, now = Date.now()) {
  if (c.revoked) return 'revoked';
  if (c.status === 'failed') return 'failed';
  if (c.expiresAt && Date.parse(c.expiresAt) <= now) return 'expired';
  return 'active';
}

// safeRedirect accepts the provider's authorisation URL only over http(s).
export function safeRedirect(u) {
  try {
    const p = new URL(u);
    return p.protocol === 'https:' || p.protocol === 'http:' ? p.href : '';
  } catch { return ''; }
}

// The Microsoft services a connection may ask for (host/connections:
// microsoftServiceScopes).
const msServices = ['files', 'outlook', 'teams'];

// embedded: shown in a workspace's area of connections and data sources,
// as a section of its page rather than a page of its own.
export function Connections({ t, api, notice, dismiss, back, embedded }) {
  const [list, setList] = useState(null);
  const [providers, setProviders] = useState([]);
  const [err, setErr] = useState('');
  const [formErr, setFormErr] = useState('');
  const [oauthErr, setOauthErr] = useState('');
  const [busy, setBusy] = useState(false);
  const [confirm, setConfirm] = useState('');
  const [provider, setProvider] = useState('');
  const [auth, setAuth] = useState('basic');
  const [oauthProvider, setOauthProvider] = useState('');
  const tokenField = useRef();
  const load = async () => {
    try {
      const [cs, ps] = await Promise.all([api('GET', '/connections'), api('GET', '/connections/providers')]);
      setList(cs || []);
      setProviders(ps || []);
      setErr('');
    } catch (e) { setErr(e.status === 404 ? t('connectionsOff') : e.message); }
  };
  // The list is asked again whenever a callback's outcome arrives.
  useEffect(() => { load(); }, [notice]);
  const tokenProviders = providers.filter((p) => p.auth.includes('basic') || p.auth.includes('token'));
  const oauthProviders = providers.filter((p) => p.auth.includes('oauth2'));
  // A provider connected by OAuth takes a token too, but one that takes
  // nothing else (Jira) is what this form is for: it comes first.
  const chosen = tokenProviders.find((p) => p.name === provider) || tokenProviders.find((p) => !p.auth.includes('oauth2')) || tokenProviders[0];
  // A file server signs in with an account and a password only, at an
  // ftp://, ftps:// or sftp:// URL; SFTP pins the server's host key.
  const files = !!(chosen && chosen.fileServer);
  const kind = files ? 'basic' : auth;
  const oauthChosen = oauthProviders.find((p) => p.name === oauthProvider) || oauthProviders[0];

  const add = async (e) => {
    e.preventDefault();
    const f = e.target;
    setFormErr(''); setBusy(true);
    // The secret is read from the field at the moment it is sent and the
    // field is emptied after: it never lives in the page's state.
    const el = f.elements;
    const body = { provider: chosen.name, label: el.label.value.trim() || chosen.name, auth: kind, token: tokenField.current.value };
    if (el.baseUrl.value.trim()) body.baseUrl = el.baseUrl.value.trim();
    if (el.deployment && el.deployment.value) body.deployment = el.deployment.value;
    if (kind === 'basic') body.account = el.account.value.trim();
    if (el.hostKey && el.hostKey.value.trim()) body.hostKey = el.hostKey.value.trim();
    try {
      await api('POST', '/connections', body);
      for (const k of ['label', 'baseUrl', 'account', 'hostKey']) if (el[k]) el[k].value = '';
      tokenField.current.value = '';
      await load();
    } catch (ex) { setFormErr(ex.message); } finally { setBusy(false); }
  };
  const connect = async (e) => {
    e.preventDefault();
    setOauthErr('');
    try {
      // Microsoft asks only for the chosen services' scopes (incremental
      // consent: Teams needs an administrator's consent, files and mail
      // do not).
      const services = oauthChosen.name === 'microsoft' ? msServices.filter((x) => e.target.elements['svc-' + x].checked) : undefined;
      if (services && services.length === 0) throw new Error(t('chooseAService'));
      const r = await api('POST', '/connections/authorize', { provider: oauthChosen.name, label: e.target.elements.oauthLabel.value.trim(), services });
      const to = safeRedirect(r && r.authorizationUrl);
      if (!to) throw new Error(t('badAuthUrl'));
      location.assign(to);
    } catch (ex) { setOauthErr(ex.message); }
  };
  const revoke = async (id) => {
    setErr('');
    try { await api('DELETE', `/connections/${encodeURIComponent(id)}`); setConfirm(''); await load(); } catch (ex) { setErr(ex.message); }
  };

  const Tag = embedded ? 'section' : 'main';
  return html`<${Tag} class=${embedded ? 'connections embedded' : 'connections'} id=${embedded ? undefined : 'main'} data-view="connections" aria-labelledby="conn-h">
    ${!embedded && html`<p><a href="/" onClick=${(e) => { e.preventDefault(); back(); }}>${t('backHome')}</a></p>`}
    ${embedded ? html`<h2 id="conn-h">${t('connections')}</h2>` : html`<h1 id="conn-h">${t('connections')}</h1>`}
    <p class="muted">${t('connectionsLead')}</p>
    ${notice && html`<div class=${'notice ' + (notice.ok ? 'ok' : 'error')} role=${notice.ok ? 'status' : 'alert'} data-testid="connection-notice" data-view="connection-notice" data-outcome=${notice.ok ? 'ok' : 'error'}>
      <span>${notice.ok ? t('connectedOk') : t('connectFailed')}${notice.provider ? ` (${notice.provider})` : ''}${!notice.ok && notice.reason ? ': ' + reasonText(t, notice.reason) : ''}</span>
      <button type="button" class="linkish" onClick=${dismiss}>${t('dismiss')}</button></div>`}
    ${err && html`<p class="error" role="alert">${err}</p>`}
    <section class="panel" aria-labelledby="conn-list-h">
      <h2 id="conn-list-h">${t('yourConnections')}</h2>
      ${list === null ? (!err && html`<p class="muted">${t('loading')}</p>`) : list.length === 0 ? html`<p class="muted">${t('noConnections')}</p>` :
        html`<table class="conn-list"><thead><tr><th scope="col">${t('provider')}</th><th scope="col">${t('label')}</th><th scope="col">${t('authKind')}</th>
          <th scope="col">${t('account')}</th><th scope="col">${t('state')}</th><th scope="col"><span class="visually-hidden">${t('actions')}</span></th></tr></thead>
        <tbody>${list.map((c) => {
          const st = connectionState(c);
          // A failed connection's error has a row of its own under it,
          // across the table: in the state cell it was a narrow column.
          const why = st === 'failed' && c.lastError;
          return html`<tr key=${c.id} data-connection=${c.id} data-state=${st} class=${why ? 'has-error' : ''}>
            <td>${c.provider}</td><td>${c.label}</td><td>${t('auth_' + c.auth)}</td>
            <td>${[c.account, c.baseUrl].filter(Boolean).join(' · ')}</td>
            <td><span class=${'badge ' + st}>${t('conn_' + st)}</span></td>
            <td>${!c.revoked && (confirm === c.id ?
              html`<span class="confirm">${t('revokeConfirm')} <button type="button" class="stop" data-testid="revoke-confirm" onClick=${() => revoke(c.id)}>${t('revoke')}</button>
                <button type="button" onClick=${() => setConfirm('')}>${t('cancel')}</button></span>` :
              html`<button type="button" data-testid="revoke" onClick=${() => setConfirm(c.id)} aria-label=${t('revoke') + ' ' + c.label}>${t('revoke')}</button>`)}</td>
          </tr>${why && html`<tr key=${c.id + '-error'} class="conn-error-row" data-error-of=${c.id}>
            <td colspan="6"><p class="conn-error" data-testid="connection-error"><span class="visually-hidden">${c.label}: </span>${withCode(c.lastError)}</p></td></tr>`}`;
        })}</tbody></table>`}
    </section>
    ${oauthProviders.length > 0 && html`<section class="panel" aria-labelledby="conn-oauth-h">
      <h2 id="conn-oauth-h">${t('connectOAuth')}</h2>
      <form class="conn-form" onSubmit=${connect}>
        <label>${t('provider')}<select name="oauthProvider" value=${oauthChosen.name} onChange=${(e) => setOauthProvider(e.target.value)}>
          ${oauthProviders.map((p) => html`<option value=${p.name}>${p.name}</option>`)}</select></label>
        <label>${t('label')}<input name="oauthLabel" maxlength="200" /></label>
        ${oauthChosen.name === 'microsoft' && html`<fieldset class="conn-services" data-testid="ms-services"><legend>${t('servicesToConnect')}</legend>
          ${msServices.map((x) => html`<label><input type="checkbox" name=${'svc-' + x} defaultChecked=${x !== 'teams'} /> ${t('msService_' + x)}</label>`)}</fieldset>`}
        <button type="submit" data-testid="oauth-connect">${t('connect')}</button>
      </form>
      ${oauthErr && html`<p class="error" role="alert">${oauthErr}</p>`}
    </section>`}
    ${chosen && html`<section class="panel" aria-labelledby="conn-token-h">
      <h2 id="conn-token-h">${t('addTokenConnection')}</h2>
      <form class="conn-form" onSubmit=${add} autocomplete="off">
        <label>${t('provider')}<select name="provider" id="conn-provider" value=${chosen.name} onChange=${(e) => setProvider(e.target.value)}>
          ${tokenProviders.map((p) => html`<option value=${p.name}>${p.name}</option>`)}</select></label>
        ${!files && html`<label>${t('authKind')}<select name="auth" id="conn-auth" value=${auth} onChange=${(e) => setAuth(e.target.value)}>
          <option value="basic">${t('auth_basic')}</option><option value="token">${t('auth_token')}</option></select></label>`}
        ${chosen.name === 'jira' && html`<label>${t('deployment')}<select name="deployment" id="conn-deployment">
          <option value="">${t('deploy_auto')}</option><option value="cloud">${t('deploy_cloud')}</option><option value="datacenter">${t('deploy_datacenter')}</option></select></label>`}
        <label>${t('label')}<input name="label" id="conn-label" maxlength="200" /></label>
        <label>${files ? t('serverUrl') : t('siteUrl')}<input name="baseUrl" id="conn-base" type="url"
          placeholder=${files ? 'sftp://files.example.com:22/reports' : 'https://example.atlassian.net'} required=${chosen.needsBaseUrl} /></label>
        ${kind === 'basic' && html`<label>${files ? t('accountName') : t('email')}<input name="account" id="conn-account" type=${files ? 'text' : 'email'} autocomplete="off" required /></label>`}
        <label>${files ? t('password') : t('apiToken')}<input ref=${tokenField} id="conn-token" type="password" autocomplete="new-password" required /></label>
        ${files && html`<label>${t('hostKey')}<input name="hostKey" id="conn-hostkey" placeholder="SHA256:…" pattern="SHA256:[A-Za-z0-9+/]{43}" aria-describedby="conn-hostkey-hint" /></label>
          <p class="muted" id="conn-hostkey-hint">${withCode(t('hostKeyHint'))}</p>`}
        <p class="muted">${t('tokenWriteOnly')}</p>
        ${formErr && html`<p class="error form-error" role="alert" data-testid="connection-form-error">${withCode(formErr)}</p>`}
        <button type="submit" data-testid="add-connection" disabled=${busy}>${t('addConnection')}</button>
      </form>
    </section>`}
  </${Tag}>`;
}
