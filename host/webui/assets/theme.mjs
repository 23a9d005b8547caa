// The person's theme and preferences (docs/ui.md, "Settings and themes").
// The theme is data-theme on <html> (light or dark; none for "system",
// where style.css follows prefers-color-scheme). This browser keeps a copy
// of the last theme so that the page opens in it, before the server's
// preferences arrive: importing this module applies it.

const themeKey = 'agenthost.theme';
let current = {};
let loading = Promise.resolve(current);

// applyTheme sets the page's theme and keeps it for the next load.
export function applyTheme(theme) {
  const t = theme === 'light' || theme === 'dark' ? theme : 'system';
  if (t === 'system') document.documentElement.removeAttribute('data-theme');
  else document.documentElement.dataset.theme = t;
  try { localStorage.setItem(themeKey, t); } catch { /* storage refused: the server's copy still applies */ }
}

function cachedTheme() {
  try { return localStorage.getItem(themeKey) || 'system'; } catch { return 'system'; }
}

applyTheme(cachedTheme());

// preferences are the person's preferences as last loaded or saved ({}
// before then).
export function preferences() { return current; }

// ready resolves when the preferences being loaded are in (at once when
// none are loading), so that what depends on them waits rather than
// rendering without them.
export function ready() { return loading.catch(() => current); }

// loadPreferences reads the person's preferences (GET /me/preferences)
// and applies their theme.
export function loadPreferences(api) {
  loading = api('GET', '/me/preferences').then((p) => { current = p; applyTheme(p.theme); return p; });
  return loading;
}

// savePreferences replaces them (PUT /me/preferences) and applies what
// the server kept.
export async function savePreferences(api, prefs) {
  current = await api('PUT', '/me/preferences', prefs);
  applyTheme(current.theme);
  return current;
}
