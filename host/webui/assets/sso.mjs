// Sign-in with the organisation's identity provider: the sign-in page's
// "Sign in with …" buttons, one per provider the server is configured with
// (GET /api/v1/auth/providers). A button is a plain link: the server sends
// the browser on to the provider and back (OpenID Connect), and the page
// it comes back to is signed in. Nothing shows when no provider is set up.
import { h } from './preact.mjs';
import { useState, useEffect } from './preact-hooks.mjs';
import htm from './htm.mjs';

const html = htm.bind(h);

// ProviderButtons lists the providers, followed by a separator before the
// token form (t is the page's translator).
export function ProviderButtons({ t }) {
  const [providers, setProviders] = useState([]);
  useEffect(() => {
    let live = true;
    fetch('/api/v1/auth/providers', { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then((r) => (r.ok ? r.json() : []))
      .then((list) => { if (live && Array.isArray(list)) setProviders(list); })
      .catch(() => {});
    return () => { live = false; };
  }, []);
  if (providers.length === 0) return null;
  return html`<div class="providers" role="group" aria-label=${t('signInProviders')}>
    ${providers.map((p) => html`<a class="button provider" data-provider=${p.name} href=${p.url}>${t('signInWith')} ${p.label}</a>`)}
    <p class="separator">${t('signInOrToken')}</p>
  </div>`;
}

// afterSignOut follows the server's answer to signing out: a session an
// identity provider opened goes on to sign out there too.
export function afterSignOut(answer) {
  if (answer && typeof answer.redirect === 'string' && /^https?:\/\//.test(answer.redirect)) {
    location.assign(answer.redirect);
    return true;
  }
  return false;
}
