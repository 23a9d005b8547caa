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
  dataSources: 'Data sources', noDataSources: 'No data sources yet.', addDataSource: 'Add a data source', syncNow: 'Sync now',
  sync_idle: 'synced', sync_never: 'not synced yet', sync_queued: 'queued', sync_running: 'syncing', sync_retrying: 'retrying', sync_failed: 'failed',
  connectionRevoked: 'Its connection was revoked: connect again and add it anew.', noConnections: 'You have no connections yet.',
  connection: 'Connection', service: 'Service', remotePath: 'Path', dsLabel: 'Label (its folder)', autoSyncHourly: 'sync every hour',
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
  dataSources: 'Datenquellen', noDataSources: 'Noch keine Datenquellen.', addDataSource: 'Datenquelle hinzufügen', syncNow: 'Jetzt abgleichen',
  sync_idle: 'abgeglichen', sync_never: 'noch nicht abgeglichen', sync_queued: 'eingereiht', sync_running: 'gleicht ab', sync_retrying: 'neuer Versuch', sync_failed: 'fehlgeschlagen',
  connectionRevoked: 'Ihre Verbindung wurde widerrufen: neu verbinden und neu anlegen.', noConnections: 'Sie haben noch keine Verbindungen.',
  connection: 'Verbindung', service: 'Dienst', remotePath: 'Pfad', dsLabel: 'Name (ihr Ordner)', autoSyncHourly: 'stündlich abgleichen',
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
