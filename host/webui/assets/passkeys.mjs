// Passkeys in the browser: sign-in with a passkey (discoverable, or narrowed
// by e-mail address), registration of a new one, and the invitation page
// where an invited person registers their first passkey and joins. The
// server keeps every ceremony (its challenge) and verifies every answer;
// this module only carries options to navigator.credentials and the
// authenticator's answer back, with binary fields as base64url (WebAuthn
// Level 3, §5.1.8 and §5.1.9: PublicKeyCredential.toJSON and
// parseCreationOptionsFromJSON, with a fallback for browsers without them).
import { h } from './preact.mjs';
import { useState } from './preact-hooks.mjs';
import htm from './htm.mjs';

const html = htm.bind(h);

export const supported = () => typeof window.PublicKeyCredential === 'function' && !!navigator.credentials;

function fromB64(s) {
  const b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
  const out = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
  return out.buffer;
}

function toB64(buf) {
  const bytes = new Uint8Array(buf);
  let s = '';
  for (const x of bytes) s += String.fromCharCode(x);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function creationOptions(o) {
  if (PublicKeyCredential.parseCreationOptionsFromJSON) return PublicKeyCredential.parseCreationOptionsFromJSON(o);
  return { ...o, challenge: fromB64(o.challenge), user: { ...o.user, id: fromB64(o.user.id) },
    excludeCredentials: (o.excludeCredentials || []).map((c) => ({ ...c, id: fromB64(c.id) })) };
}

function requestOptions(o) {
  if (PublicKeyCredential.parseRequestOptionsFromJSON) return PublicKeyCredential.parseRequestOptionsFromJSON(o);
  return { ...o, challenge: fromB64(o.challenge), allowCredentials: (o.allowCredentials || []).map((c) => ({ ...c, id: fromB64(c.id) })) };
}

function credentialJSON(c) {
  if (typeof c.toJSON === 'function') return c.toJSON();
  const r = c.response;
  const response = { clientDataJSON: toB64(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = toB64(r.attestationObject);
    response.transports = r.getTransports ? r.getTransports() : [];
  } else {
    response.authenticatorData = toB64(r.authenticatorData);
    response.signature = toB64(r.signature);
    if (r.userHandle) response.userHandle = toB64(r.userHandle);
  }
  return { id: c.id, rawId: toB64(c.rawId), type: c.type, response, authenticatorAttachment: c.authenticatorAttachment || undefined,
    clientExtensionResults: c.getClientExtensionResults ? c.getClientExtensionResults() : {} };
}

// register runs a registration: start (POST startPath), the authenticator,
// finish (POST finishPath with extra fields). api is app.mjs's.
export async function register(api, startPath, startBody, finishPath, extra) {
  const start = await api('POST', startPath, startBody);
  const cred = await navigator.credentials.create({ publicKey: creationOptions(start.options) });
  return api('POST', finishPath, { ...extra, ceremonyId: start.ceremonyId, credential: credentialJSON(cred) });
}

// signIn runs a passkey sign-in and answers the session, as POST /session.
export async function signIn(api, email) {
  const start = await api('POST', '/session/passkey/options', email ? { email } : {});
  const cred = await navigator.credentials.get({ publicKey: requestOptions(start.options) });
  return api('POST', '/session/passkey', { ceremonyId: start.ceremonyId, credential: credentialJSON(cred) });
}

// message explains a failed ceremony: the browser's cancellation in
// words, the server's problem as it says it.
export function message(e) {
  if (e && e.name === 'NotAllowedError') return 'The passkey request was cancelled or timed out.';
  if (e && e.name === 'InvalidStateError') return 'This authenticator already holds a passkey for you here.';
  return (e && e.message) || String(e);
}

// PasskeySignIn is the sign-in form's passkey part.
export function PasskeySignIn({ api, onSignedIn }) {
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState('');
  if (!supported()) return null;
  const go = async (e) => {
    e.preventDefault();
    setBusy(true); setErr('');
    try { onSignedIn(await signIn(api, email.trim())); } catch (ex) { setErr(message(ex)); } finally { setBusy(false); }
  };
  return html`<form class="passkey-signin" onSubmit=${go} aria-labelledby="passkey-title">
    <h2 id="passkey-title">Sign in with a passkey</h2>
    <label for="passkey-email">E-mail address (optional)</label>
    <input id="passkey-email" type="email" autocomplete="username webauthn" value=${email} onInput=${(e) => setEmail(e.target.value)} />
    ${err && html`<p id="passkey-error" class="error" role="alert">${err}</p>`}
    <button type="submit" id="passkey-signin" disabled=${busy}>${busy ? 'Waiting for the passkey…' : 'Sign in with a passkey'}</button>
  </form>`;
}

// takeInvitation reads an invitation link's secret (?invitation=…) and
// takes it out of the address bar and the history.
export function takeInvitation() {
  const q = new URLSearchParams(location.search);
  const secret = q.get('invitation') || '';
  if (secret) history.replaceState(null, '', location.pathname);
  return secret;
}

// Join is the invitation page: the invited person names and registers a
// passkey, which accepts the invitation and signs them in.
export function Join({ api, secret, onSignedIn }) {
  const [name, setName] = useState('This device');
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState('');
  const go = async (e) => {
    e.preventDefault();
    setBusy(true); setErr('');
    try {
      onSignedIn(await register(api, '/invitation/passkey/options', { invitation: secret }, '/invitation/passkey', { invitation: secret, name: name.trim() }));
    } catch (ex) { setErr(message(ex)); } finally { setBusy(false); }
  };
  return html`<main class="signin" id="main" data-view="join">
    <form onSubmit=${go} aria-labelledby="join-title">
      <h1 id="join-title">You are invited</h1>
      ${!secret ? html`<p class="error" role="alert">This page needs the invitation link you were sent.</p>` : html`
        <p>Register a passkey (your device's screen lock or a security key) to join. You will sign in with it from now on.</p>
        ${!supported() && html`<p class="error" role="alert">This browser cannot use passkeys.</p>`}
        <label for="join-name">Name of this passkey</label>
        <input id="join-name" required maxlength="100" value=${name} onInput=${(e) => setName(e.target.value)} />
        ${err && html`<p id="join-error" class="error" role="alert">${err}</p>`}
        <button type="submit" id="join-register" disabled=${busy || !supported()}>${busy ? 'Waiting for the passkey…' : 'Register a passkey and join'}</button>`}
    </form>
  </main>`;
}

// SecondFactor is the step after a token or identity-provider sign-in
// when the organisation requires a passkey as second factor: the session
// is pending until a passkey of the person's is proved. A person without
// one registers it first (the server allows that on a pending session only
// while they have none), then proves it. state is GET
// /api/v1/session/second-factor's answer; onDone gets the session.
export function SecondFactor({ api, state, onDone, onCancel }) {
  const [next, setNext] = useState(state.next);
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState('');
  const prove = async () => {
    const start = await api('POST', '/session/second-factor/options');
    const cred = await navigator.credentials.get({ publicKey: requestOptions(start.options) });
    onDone(await api('POST', '/session/second-factor', { ceremonyId: start.ceremonyId, credential: credentialJSON(cred) }));
  };
  const run = async (e) => {
    e.preventDefault();
    setBusy(true); setErr('');
    try {
      if (next === 'register') {
        await register(api, '/session/second-factor/passkeys/options', undefined, '/session/second-factor/passkeys', { name: name.trim() || 'Passkey' });
        setNext('assert');
      } else {
        await prove();
      }
    } catch (ex) { setErr(message(ex)); } finally { setBusy(false); }
  };
  const cancel = async () => { try { await api('DELETE', '/session/second-factor'); } finally { onCancel(); } };
  return html`<main class="signin" id="main" data-view="second-factor">
    <form onSubmit=${run} aria-labelledby="second-factor-title">
      <h1 id="second-factor-title">Confirm with a passkey</h1>
      ${next === 'register'
        ? html`<p>Your organisation requires a passkey as a second factor, and you have none yet. Register one now, then confirm with it.</p>
          <label for="second-factor-name">Passkey name</label>
          <input id="second-factor-name" value=${name} onInput=${(e) => setName(e.target.value)} placeholder="Laptop" />`
        : html`<p>Your organisation requires a passkey as a second factor. Confirm it is you with one of your passkeys.</p>`}
      ${!supported() && html`<p class="error" role="alert">This browser does not support passkeys.</p>`}
      ${err && html`<p id="second-factor-error" class="error" role="alert">${err}</p>`}
      <button type="submit" id="second-factor-go" disabled=${busy || !supported()}>
        ${busy ? 'Waiting for the passkey…' : next === 'register' ? 'Register a passkey' : 'Confirm with a passkey'}</button>
      <button type="button" id="second-factor-cancel" onClick=${cancel}>Cancel and sign out</button>
    </form>
  </main>`;
}
