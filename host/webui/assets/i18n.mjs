// The UI's words in English and German. A missing German entry falls back
// to English, so a new string never shows as a key.
const en = {
  appName: 'agenthost',
  signInTitle: 'Sign in', signInLead: 'Sign in with an API token. An administrator issues tokens (agenthost admin token); agenthost has no passwords.',
  token: 'API token', signIn: 'Sign in', signOut: 'Sign out', signingIn: 'Signing in…',
  workspace: 'Workspace', tenant: 'Organisation', language: 'Language', noWorkspaces: 'You are not a member of any workspace yet.',
  conversations: 'Conversations', newConversation: 'New conversation', noConversations: 'No conversations yet.',
  files: 'Files', folders: 'Folders', allFiles: 'All files', noFolder: 'No folder', noFiles: 'No files yet. Drop files here or choose them.',
  dropHere: 'Drop files here to upload', chooseFiles: 'Choose files', tagsPlaceholder: 'tags, comma-separated', uploading: 'Uploading',
  knowledge: 'Knowledge', search: 'Search', searchPlaceholder: 'Search your documents', noHits: 'Nothing found.',
  preview: 'Preview', activity: 'Tool activity', noActivity: 'No tool calls yet.', closePreview: 'Close preview',
  page: 'page', entries: 'Archive entries', arguments: 'Arguments', result: 'Result', duration: 'Duration', cost: 'Cost',
  ask: 'Ask about your documents… (@ to name a file)', send: 'Send', stop: 'Stop', attach: 'Attach', remove: 'Remove',
  running: 'running', completed: 'completed', stopped: 'stopped', failed: 'failed',
  budgetExceeded: 'stopped: budget exceeded', maxRoundsReached: 'stopped: round limit reached', degraded: 'degraded: answering without document context',
  reconnecting: 'Connection lost: reconnecting…', loading: 'Loading…', error: 'Error', retry: 'Retry',
  notFound: 'Not found', notFoundLead: 'This workspace or conversation does not exist, or it is not yours to see.', backHome: 'Back to your workspaces',
  status_pending: 'waiting', status_extracted: 'extracted', status_embedding: 'embedding', status_indexed: 'indexed', status_failed: 'failed',
  emptyChat: 'Ask a question to start a conversation. The agent reads your files and cites where it found the answer.',
  you: 'You', assistant: 'Agent', rounds: 'Rounds', tokens: 'Tokens', voice: 'Voice', serverStatus: 'Server status',
  mainNav: 'Workspace', chat: 'Chat', sources: 'Sources',
  newFolder: 'New folder', create: 'Create', addOrg: 'Add organisation', cancel: 'Cancel',
  on: 'on', off: 'off', record: 'Speak', stopRecording: 'Stop recording', transcribing: 'Transcribing…',
  proposal: 'Proposed edit', accept: 'Accept', reject: 'Reject',
  proposal_pending: 'awaiting your decision', proposal_accepted: 'accepted', proposal_rejected: 'rejected',
  connections: 'Connections', connectionsLead: 'Your connections to external services (Jira, Microsoft, Google, …). Agents use them through the connection tools; the secrets stay on the server and are never shown again.',
  connectionsOff: 'Connections are off on this server (its operator sets AGENTHOST_SECRET_KEY to enable them).',
  yourConnections: 'Your connections', noConnections: 'No connections yet.', provider: 'Provider', label: 'Label', authKind: 'Sign-in',
  account: 'Account', state: 'State', actions: 'Actions', auth_oauth2: 'OAuth', auth_token: 'API token', auth_basic: 'E-mail and API token',
  conn_active: 'active', conn_expired: 'expired', conn_revoked: 'revoked',
  revoke: 'Revoke', revokeConfirm: 'Revoke this connection? Agents can no longer use it.',
  connectOAuth: 'Connect an account', connect: 'Connect', badAuthUrl: 'The server answered no usable authorisation address.',
  addTokenConnection: 'Add a connection with an API token', siteUrl: 'Site URL', email: 'E-mail', apiToken: 'API token',
  tokenWriteOnly: 'The token is sent to the server once and never shown again.', addConnection: 'Add connection',
  connectedOk: 'Connected: the account is now in your connections', connectFailed: 'The connection was not made', dismiss: 'Dismiss',
  connErr_signed_out: 'You were not signed in when the provider sent you back: sign in and connect again.',
  connErr_expired: 'The authorisation was unknown, already used or older than 10 minutes: connect again.',
  connErr_invalid: 'The provider sent you back without an authorisation code.',
  connErr_rejected: 'The provider refused the authorisation code: connect again.',
  connErr_access_denied: 'Access was not granted at the provider.',
};
const de = {
  signInTitle: 'Anmelden', signInLead: 'Melden Sie sich mit einem API-Token an. Tokens stellt eine Administratorin aus (agenthost admin token); agenthost hat keine Passwörter.',
  token: 'API-Token', signIn: 'Anmelden', signOut: 'Abmelden', signingIn: 'Anmeldung…',
  workspace: 'Arbeitsbereich', tenant: 'Organisation', language: 'Sprache', noWorkspaces: 'Sie sind noch in keinem Arbeitsbereich Mitglied.',
  conversations: 'Unterhaltungen', newConversation: 'Neue Unterhaltung', noConversations: 'Noch keine Unterhaltungen.',
  files: 'Dateien', folders: 'Ordner', allFiles: 'Alle Dateien', noFolder: 'Ohne Ordner', noFiles: 'Noch keine Dateien. Dateien hierher ziehen oder auswählen.',
  dropHere: 'Dateien zum Hochladen hier ablegen', chooseFiles: 'Dateien auswählen', tagsPlaceholder: 'Tags, durch Komma getrennt', uploading: 'Lädt hoch',
  knowledge: 'Wissen', search: 'Suchen', searchPlaceholder: 'In Ihren Dokumenten suchen', noHits: 'Nichts gefunden.',
  preview: 'Vorschau', activity: 'Werkzeug-Aktivität', noActivity: 'Noch keine Werkzeugaufrufe.', closePreview: 'Vorschau schliessen',
  page: 'Seite', entries: 'Archiveinträge', arguments: 'Argumente', result: 'Ergebnis', duration: 'Dauer', cost: 'Kosten',
  ask: 'Fragen Sie zu Ihren Dokumenten… (@ nennt eine Datei)', send: 'Senden', stop: 'Stoppen', attach: 'Anhängen', remove: 'Entfernen',
  running: 'läuft', completed: 'abgeschlossen', stopped: 'gestoppt', failed: 'fehlgeschlagen',
  budgetExceeded: 'gestoppt: Budget überschritten', maxRoundsReached: 'gestoppt: Rundenlimit erreicht', degraded: 'eingeschränkt: Antwort ohne Dokumentkontext',
  reconnecting: 'Verbindung unterbrochen: verbinde neu…', loading: 'Lädt…', error: 'Fehler', retry: 'Erneut versuchen',
  notFound: 'Nicht gefunden', notFoundLead: 'Dieser Arbeitsbereich oder diese Unterhaltung existiert nicht, oder Sie dürfen sie nicht sehen.', backHome: 'Zurück zu Ihren Arbeitsbereichen',
  status_pending: 'wartet', status_extracted: 'extrahiert', status_embedding: 'Vektoren', status_indexed: 'indexiert', status_failed: 'fehlgeschlagen',
  emptyChat: 'Stellen Sie eine Frage, um eine Unterhaltung zu beginnen. Der Agent liest Ihre Dateien und nennt, wo er die Antwort fand.',
  you: 'Sie', assistant: 'Agent', rounds: 'Runden', tokens: 'Tokens', voice: 'Sprachmodus', serverStatus: 'Serverstatus',
  mainNav: 'Arbeitsbereich', chat: 'Chat', sources: 'Quellen',
  newFolder: 'Neuer Ordner', create: 'Anlegen', addOrg: 'Organisation hinzufügen', cancel: 'Abbrechen',
  on: 'ein', off: 'aus', record: 'Sprechen', stopRecording: 'Aufnahme beenden', transcribing: 'Transkribiert…',
  proposal: 'Änderungsvorschlag', accept: 'Annehmen', reject: 'Ablehnen',
  proposal_pending: 'wartet auf Ihre Entscheidung', proposal_accepted: 'angenommen', proposal_rejected: 'abgelehnt',
  connections: 'Verbindungen', connectionsLead: 'Ihre Verbindungen zu externen Diensten (Jira, Microsoft, Google, …). Agenten nutzen sie über die Verbindungswerkzeuge; die Geheimnisse bleiben auf dem Server und werden nie wieder angezeigt.',
  connectionsOff: 'Verbindungen sind auf diesem Server ausgeschaltet (der Betreiber setzt AGENTHOST_SECRET_KEY, um sie einzuschalten).',
  yourConnections: 'Ihre Verbindungen', noConnections: 'Noch keine Verbindungen.', provider: 'Anbieter', label: 'Bezeichnung', authKind: 'Anmeldung',
  account: 'Konto', state: 'Zustand', actions: 'Aktionen', auth_oauth2: 'OAuth', auth_token: 'API-Token', auth_basic: 'E-Mail und API-Token',
  conn_active: 'aktiv', conn_expired: 'abgelaufen', conn_revoked: 'widerrufen',
  revoke: 'Widerrufen', revokeConfirm: 'Diese Verbindung widerrufen? Agenten können sie dann nicht mehr nutzen.',
  connectOAuth: 'Konto verbinden', connect: 'Verbinden', badAuthUrl: 'Der Server nannte keine brauchbare Autorisierungsadresse.',
  addTokenConnection: 'Verbindung mit API-Token hinzufügen', siteUrl: 'Website-URL', email: 'E-Mail', apiToken: 'API-Token',
  tokenWriteOnly: 'Das Token geht einmal an den Server und wird nie wieder angezeigt.', addConnection: 'Verbindung hinzufügen',
  connectedOk: 'Verbunden: das Konto steht jetzt in Ihren Verbindungen', connectFailed: 'Die Verbindung kam nicht zustande', dismiss: 'Ausblenden',
  connErr_signed_out: 'Sie waren nicht angemeldet, als der Anbieter Sie zurückschickte: melden Sie sich an und verbinden Sie erneut.',
  connErr_expired: 'Die Autorisierung war unbekannt, schon verwendet oder älter als 10 Minuten: verbinden Sie erneut.',
  connErr_invalid: 'Der Anbieter schickte Sie ohne Autorisierungscode zurück.',
  connErr_rejected: 'Der Anbieter lehnte den Autorisierungscode ab: verbinden Sie erneut.',
  connErr_access_denied: 'Der Zugriff wurde beim Anbieter nicht gewährt.',
};
export const languages = { en: 'English', de: 'Deutsch' };
const dicts = { en, de };

export function pickLanguage() {
  const saved = localStorage.getItem('agenthost.lang');
  if (saved && dicts[saved]) return saved;
  return (navigator.language || 'en').toLowerCase().startsWith('de') ? 'de' : 'en';
}

export function translator(lang) {
  const d = dicts[lang] || en;
  return (key) => d[key] ?? en[key] ?? key;
}
