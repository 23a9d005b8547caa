package settings

// All is every setting, in the order docs/configuration.md lists them. A
// new flag or variable is added here (and `go generate ./host/settings`
// refreshes the documentation); TestRegistryCoversCode fails otherwise.
func All() []Setting {
	// Commands are named as checkSettings is called: "storage" is `admin
	// storage`, "admin" the other admin subcommands, "blobs" `blobs copy`,
	// "plugin" every plugin subcommand that reads a setting.
	const (
		sw    = "serve worker"
		swm   = "serve worker migrate backup"
		db    = swm + " blobs admin storage" // what opens the database
		store = "serve worker storage"       // what sweeps storage or stores blobs
	)
	return []Setting{
		// The server.
		{Flag: "addr", Env: "AGENTHOST_ADDR", Default: "127.0.0.1:8080", Commands: "serve", Doc: "listen address"},
		{Flag: "mcp-addr", Env: "AGENTHOST_MCP_ADDR", Default: "127.0.0.1:8081", Commands: "serve", Doc: "listen address of the MCP endpoint (`/api/v1/workspaces/ID/mcp`, [mcp.md](mcp.md)); `off` serves none"},
		{Flag: "mcp-host", Env: "AGENTHOST_MCP_HOSTS", Kind: List, Commands: "serve", Doc: "a `Host` the MCP endpoint answers besides loopback names, e.g. the public name behind a proxy (repeatable; the variable comma-separated); others are refused (DNS rebinding)"},
		{Flag: "mcp-cors-origin", Env: "AGENTHOST_MCP_CORS_ORIGINS", Kind: List, Commands: "serve", Doc: "an origin (`https://ide.example`) of browser-based MCP clients: its preflights are answered before authentication and its responses carry CORS headers (repeatable; the variable comma-separated); others get none"},
		{Flag: "data", Env: "AGENTHOST_DATA", Default: "data", Commands: db + " restore", Doc: "data directory: embedded database, blobs ([storage.md](storage.md)); `serve` makes it `0700` (an existing one too, logged), so that stdio MCP servers and other users cannot read it"},
		{Flag: "database", Env: "AGENTHOST_DATABASE_URL", Default: "(embedded)", Commands: db + " load", Secret: true, Doc: "`postgres://…`: PostgreSQL for records and blobs (blobs in a bucket instead with [`objectStorage`](#object-storage-objectstorage))"},
		{Flag: "database-wait", Env: "AGENTHOST_DATABASE_WAIT", Kind: Duration, Default: "30s", Commands: db, Doc: "how long start-up keeps retrying a PostgreSQL server that does not answer (pauses doubling to 5 s); `0` fails at once"},
		{Flag: "migrate", Kind: Bool, Default: "false", Commands: sw, Doc: "apply pending PostgreSQL migrations at start-up (the embedded database always is)"},
		{Flag: "config", Env: "AGENTHOST_CONFIG", Commands: sw + " backup blobs storage", Doc: "configuration file (YAML or JSON); environment variables override it; an unknown key at any level is refused"},
		{Flag: "max-upload", Env: "AGENTHOST_MAX_UPLOAD", Kind: Size, Default: "1GiB", Commands: "serve", Doc: "largest accepted upload (into the workspace, and out through a connector's `externalUpload`): bytes, or with a unit (`512MB`, `1GiB`)"},
		{Flag: "version-retention", Env: "AGENTHOST_VERSION_RETENTION", Kind: Duration, Default: "720h", Commands: store, Doc: "how long a file's older versions are kept after a newer one replaced them, and edit proposals after they were decided; `0`: forever ([storage retention](#storage-retention))"},
		{Flag: "trash-retention", Env: "AGENTHOST_TRASH_RETENTION", Kind: Duration, Default: "168h", Commands: store, Doc: "how long a deleted file stays in the trash with its bytes; `0`: its bytes go at the next sweep; negative: kept forever"},
		{Flag: "sweep-grace", Env: "AGENTHOST_SWEEP_GRACE", Kind: Duration, Default: "1h", Commands: store, Doc: "bytes written (or last referred to) less than this long ago are never reclaimed; must exceed the longest time between an upload's last byte and its row"},
		{Flag: "sweep-every", Env: "AGENTHOST_SWEEP_EVERY", Kind: Duration, Default: "1h", Commands: store, Doc: "how often the storage sweep runs, once for all hosts sharing the database"},
		{Flag: "audit-retention", Env: "AGENTHOST_AUDIT_RETENTION", Kind: Duration, Default: "9600h", Commands: store, Doc: "how long the audit log keeps its entries (deleted every 6 h once older); `0`: forever"},
		{Flag: "shutdown-timeout", Env: "AGENTHOST_SHUTDOWN_TIMEOUT", Kind: Duration, Default: "10s", Commands: "serve", Doc: "requests are cancelled after a quarter of it, the process exits at its end"},
		{Flag: "tenant-rate", Env: "AGENTHOST_TENANT_RATE", Kind: Int, Default: "0", Commands: "serve", Doc: "requests that start work (workflows, background jobs, tool calls, uploads, MCP calls) per tenant and minute, counted in the database so the limit holds over all hosts; over it: `429` with `Retry-After`; `0`: none"},
		{Env: "AGENTHOST_PUBLIC_URL", Default: "http://localhost:PORT on a loopback address", Commands: "serve", Doc: "the URL people open the server at; its host is the passkeys' WebAuthn RP ID ([people.md](people.md)); without one (and off loopback) there are no passkeys"},
		{Env: "AGENTHOST_COOKIE_SECURE", Kind: Bool, Default: "false", Commands: "serve", Doc: "mark the workspace UI's session cookie `Secure`: set it when the server is reached over HTTPS (directly or behind a proxy)"},
		{Env: "AGENTHOST_APPROVAL_TTL", Kind: Duration, Default: "24h", Commands: "serve", Doc: "how long a tool call waits for a person's approval before it expires and the model is told so ([agent.md](agent.md#approval-policy))"},
		{Env: "AGENTHOST_APPROVAL_SWEEP", Kind: Duration, Default: "10s", Commands: "serve", Doc: "how often serve expires approvals nobody decided in time and resumes rounds whose calls were all decided"},
		{Env: "AGENTHOST_DATASOURCE_TICK", Kind: Duration, Default: "30s", Commands: "serve", Doc: "how often serve looks for data sources due for their automatic sync ([connectors.md](connectors.md#data-sources))"},

		// Plugins.
		{Flag: "plugins", Env: "AGENTHOST_PLUGINS", Commands: sw + " admin", Doc: "directory of third-party plugins (`*.wasm`)"},
		{Flag: "trust", Kind: List, Commands: sw + " plugin", Doc: "public key file whose signatures third-party plugins may carry (repeatable)"},
		{Flag: "allow-unsigned", Kind: Bool, Default: "false", Commands: sw, Doc: "load third-party plugins without a signature (a bad signature is still refused)"},
		{Flag: "allow-uninterruptible", Kind: List, Commands: sw + " plugin", Doc: "load the named plugin although the host cannot instrument it to stop at its deadline (SIMD, threads, exceptions, multi-memory); its straight-line work then runs past the deadline (repeatable; grants file: `uninterruptible: true`)"},
		{Flag: "enable-plugin", Kind: List, Commands: sw, Doc: "load an opt-in built-in plugin: `mcpconformance`, the MCP conformance fixtures (repeatable)"},
		{Flag: "plugin-admins", Kind: List, Commands: "serve", Doc: "tenant whose admins may install, upgrade and remove plugins on the running server (repeatable; [plugin-authoring.md](plugin-authoring.md#4-install-on-a-running-server)); installs are kept in `DATA/plugins`"},
		{Flag: "plugin-upgrades-may-widen", Env: "AGENTHOST_PLUGIN_UPGRADES_MAY_WIDEN", Kind: Bool, Default: "false", Commands: "serve", Doc: "let an upgrade widen a plugin (higher limits, tools, write access, capabilities, hosts) without the admin's confirmation; still logged and recorded in the plugin audit log"},
		{Flag: "allow-host", Kind: List, Commands: sw + " plugin", Doc: "`host[:port]` plugins may reach although it resolves to a private or loopback address; a bare name allows ports 80 and 443 (repeatable)"},
		{Flag: "resolve", Kind: List, Commands: sw + " plugin", Doc: "`NAME=ADDR`: answer the IP address `ADDR` for the host name `NAME` in plugins' and connectors' HTTP, webSearch and HTTP MCP servers; see [pointing a name elsewhere](#pointing-a-name-elsewhere) (repeatable)"},
		{Flag: "cache-dir", Env: "AGENTHOST_CACHE_DIR", Default: "the user's cache dir, agenthost/wasm", Commands: sw + " plugin", Doc: "compile cache, verified, shared by `serve`, `worker` and `plugin call`"},
		{Flag: "cache-max-mb", Env: "AGENTHOST_CACHE_MAX_MB", Kind: Int, Default: "2048", Commands: sw + " plugin", Doc: "the compile cache's size in MB; past it the least recently started plugins' code is deleted (`0`: the default; a negative size is refused)"},
		{Flag: "cache-max-unused", Env: "AGENTHOST_CACHE_MAX_UNUSED", Kind: Duration, Default: "720h", Commands: sw + " plugin", Doc: "code no plugin start used for this long is deleted when a host opens the cache (`0`: the default; a negative duration is refused)"},
		{Flag: "extractor", Env: "AGENTHOST_EXTRACTORS", Kind: List, Commands: sw, Doc: "`MIME=PLUGIN`: who extracts a MIME type or family ([knowledge.md](knowledge.md#which-extractor)); the variable `mime=plugin,…`, which the flags override"},
		{Flag: "grants", Env: "AGENTHOST_PLUGIN_GRANTS", Commands: sw + " plugin", Doc: "operator grants file ([plugin grants](#plugin-grants)); `-grant PLUGIN=CAP,…`, `-grant-host` and `-mount` grant on the command line"},
		{Flag: "pool-size", Env: "AGENTHOST_PLUGIN_POOL", Kind: Int, Default: "0", Commands: sw, Doc: "live instances per plugin (`0`: two per CPU)"},
		{Flag: "plugin-init-timeout", Kind: Duration, Default: "30s", Commands: sw, Doc: "how long a plugin instance may take to start"},

		// Billing.
		{Flag: "plugin-chf-per-hour", Env: "AGENTHOST_PLUGIN_CHF_PER_HOUR", Kind: Money, Default: "0", Commands: sw, Doc: "price of tool calls' wall time in CHF per hour ([billing](#billing))"},
		{Flag: "budget-overdraft-chf", Env: "AGENTHOST_BUDGET_OVERDRAFT_CHF", Kind: Money, Default: "0.10", Commands: sw, Doc: "how far a tenant's spending may pass its credit or monthly limit, whatever its concurrency ([billing.md](billing.md#limits))"},

		// Observability.
		{Flag: "otlp-endpoint", Env: "AGENTHOST_OTLP_ENDPOINT", Default: "$OTEL_EXPORTER_OTLP_ENDPOINT", Commands: sw, Doc: "OTLP/HTTP receiver of trace spans ([observability.md](observability.md)); empty exports none"},
		{Flag: "metrics-token", Env: "AGENTHOST_METRICS_TOKEN", Commands: sw, Secret: true, Doc: "Bearer token for `/metrics` from other than loopback (give it in the variable: the command line is world-readable)"},
		{Flag: "metrics-addr", Env: "AGENTHOST_WORKER_METRICS_ADDR", Default: "127.0.0.1:9464", Commands: "worker", Doc: "`worker` only: where it serves `/metrics` (`off`: nowhere); `serve` serves them on its API address"},
		{Flag: "trace-health", Env: "AGENTHOST_TRACE_HEALTH", Kind: Bool, Default: "false", Commands: sw, Doc: "make trace spans of `/healthz`, `/status` and `/metrics` too"},

		// MCP clients and secrets.
		{Flag: "mcp-command", Env: "AGENTHOST_MCP_COMMANDS", Kind: List, Commands: "serve admin", Doc: "a stdio MCP server command tenant admins may add, after `env=NAME,…` naming the only variables they may set for it (repeatable; the variable `;`-separated; [mcp-client.md](mcp-client.md#adding-a-server))"},
		{Flag: "mcp-user", Env: "AGENTHOST_MCP_USER", Default: "(nobody)", Commands: "serve", Doc: "the user stdio MCP servers run as when `serve` runs as root (never root; a `serve` that is not root runs them as its own user)"},
		{Flag: "mcp-uids", Env: "AGENTHOST_MCP_UIDS", Commands: "serve", Doc: "`FIRST-LAST` (`231000-231999`): each stdio MCP process of a root `serve` runs as a uid of its own from the range, so servers cannot read or signal one another; instead of `-mcp-user`"},
		{Flag: "secret-key-file", Env: "AGENTHOST_SECRET_KEY_FILE", Commands: sw + " admin", Doc: "a file holding the secret key, instead of `AGENTHOST_SECRET_KEY`; not both"},
		{Env: "AGENTHOST_SECRET_KEY", Commands: sw + " admin", Secret: true, Doc: "32 random bytes, base64 (`openssl rand -base64 32`): seals users' connection secrets ([connectors.md](connectors.md)) and the secrets of external MCP servers ([mcp-client.md](mcp-client.md)) at rest; without it no secret is stored, connections are off and MCP servers with secrets are refused"},
		{Env: "AGENTHOST_OAUTH_PROVIDERS", Kind: List, Commands: "serve", Doc: "OAuth clients of connection providers, each configured by `AGENTHOST_OAUTH_<NAME>_CLIENT_ID`, `_CLIENT_SECRET`, … ([connectors.md](connectors.md#providers))"},

		// The agent.
		{Env: "AGENTHOST_AGENT_MAX_ROUNDS", Kind: Int, Default: "25", Commands: sw, Doc: "loop rounds per request; the last one summarises the progress ([agent.md](agent.md))"},
		{Env: "AGENTHOST_AGENT_MAX_COST_CHF", Kind: Money, Default: "0", Commands: sw, Doc: "CHF a workflow may spend, its tools' model calls included; `0`: no budget"},
		{Env: "AGENTHOST_AGENT_TITLES", Kind: Bool, Default: "true", Commands: sw, Doc: "name a new conversation after its first exchange: one call of the title chain, billed as purpose `title`; `false`: it keeps the start of its first prompt ([agent.md](agent.md#conversation-titles))"},
		{Env: "AGENTHOST_AGENT_ENTITY_CACHE", Kind: Bool, Default: "false", Commands: sw, Doc: "the host's default for the entity cache; a workspace's manager overrides it ([agent.md](agent.md#context))"},

		// Models (the llm section; the variables override it).
		{Env: "AGENTHOST_OPENAI_BASE_URL", File: "llm.providers[].baseURL", Default: "https://api.openai.com/v1", Commands: sw, Doc: "the `openai` provider's API root; `AGENTHOST_<PROVIDER>_BASE_URL` for a provider of the file"},
		{Env: "AGENTHOST_OPENAI_API_KEY", File: "llm.providers[].apiKey", Commands: sw, Secret: true, Doc: "the `openai` provider's key; `AGENTHOST_<PROVIDER>_API_KEY` for a provider of the file"},
		{Env: "AGENTHOST_OPENAI_TIMEOUT", File: "llm.providers[].timeout", Default: "120s", Commands: sw, Doc: "one request's bound (`30s`, or seconds as a number); `AGENTHOST_<PROVIDER>_TIMEOUT` for a provider of the file"},
		{Env: "AGENTHOST_MODEL_AGENT", File: "llm.models.agent", Kind: List, Commands: sw, Doc: "the agent's chain: `model` or `model@provider`, comma-separated; `none` removes the file's"},
		{Env: "AGENTHOST_MODEL_SUMMARY", File: "llm.models.summary", Kind: List, Commands: sw, Doc: "the summary chain (default: the agent's)"},
		{Env: "AGENTHOST_MODEL_EMBEDDING", File: "llm.models.embedding", Kind: List, Commands: sw, Doc: "the embedding chain; search is hybrid with one"},
		{Env: "AGENTHOST_MODEL_TRANSCRIPTION", File: "llm.models.transcription", Kind: List, Commands: sw, Doc: "the speech-to-text chain"},
		{Env: "AGENTHOST_MODEL_SPEECH", File: "llm.models.speech", Kind: List, Commands: sw, Doc: "the text-to-speech chain"},
		{Env: "AGENTHOST_MODEL_IMAGE", File: "llm.models.image", Kind: List, Commands: sw, Doc: "the `image` chain, used by `generateImage`"},
		{Env: "AGENTHOST_MODEL_OCR", File: "llm.models.ocr", Kind: List, Commands: sw, Doc: "the vision model reading scanned pages ([knowledge.md](knowledge.md#ocr))"},
		{Env: "AGENTHOST_MODEL_TITLE", File: "llm.models.title", Kind: List, Commands: sw, Doc: "the chain naming a conversation after its first exchange (default: the summary chain; [agent.md](agent.md#conversation-titles))"},
		{Env: "AGENTHOST_MODEL_AGENT_FUNCTION_CALLING", File: "llm.models.agent[].functionCalling", Kind: Bool, Default: "true", Commands: sw, Doc: "`false`: the chain's models have no native tool calls (`AGENTHOST_MODEL_<OPERATION>_FUNCTION_CALLING` for the others)"},
		{Env: "AGENTHOST_EMBEDDING_BATCH_SIZE", File: "llm.embedding.batchSize", Kind: Int, Default: "64", Commands: sw, Doc: "texts per embeddings request"},
		{Env: "AGENTHOST_EMBEDDING_DIMENSIONS", Kind: Int, Commands: sw, Doc: "`dimensions` for every embedding model"},
		{Env: "AGENTHOST_TRANSCRIPTION_LANGUAGE", File: "llm.transcription.language", Commands: sw, Doc: "ISO-639-1 hint (`de`); empty lets the model detect"},
		{Env: "AGENTHOST_SPEECH_VOICE", File: "llm.speech.voice", Default: "alloy", Commands: sw, Doc: "default voice"},
		{Env: "AGENTHOST_SPEECH_FORMAT", File: "llm.speech.format", Default: "mp3", Commands: sw, Doc: "`mp3`, `opus`, `aac`, `flac`, `wav` or `pcm`"},
		{Env: "AGENTHOST_LLM_RETRY_ATTEMPTS", File: "llm.retry.attempts", Kind: Int, Commands: sw, Doc: "attempts per model before the chain moves on"},

		// Web search.
		{Env: "AGENTHOST_WEBSEARCH_PROVIDER", File: "webSearch.provider", Commands: sw, Doc: "the search provider ([web search](#web-search-and-sql-websearch-sqlquery))"},
		{Env: "AGENTHOST_WEBSEARCH_URL", File: "webSearch.url", Commands: sw, Doc: "the provider's endpoint"},
		{Env: "AGENTHOST_WEBSEARCH_API_KEY", File: "webSearch.apiKey", Commands: sw, Secret: true, Doc: "the provider's key"},

		// Object storage.
		{Env: "AGENTHOST_S3_ENDPOINT", File: "objectStorage.endpoint", Commands: store + " backup blobs", Doc: "S3 endpoint ([object storage](#object-storage-objectstorage))"},
		{Env: "AGENTHOST_S3_REGION", File: "objectStorage.region", Commands: store + " backup blobs", Doc: "the bucket's region"},
		{Env: "AGENTHOST_S3_BUCKET", File: "objectStorage.bucket", Commands: store + " backup blobs", Doc: "the bucket"},
		{Env: "AGENTHOST_S3_PREFIX", File: "objectStorage.prefix", Commands: store + " backup blobs", Doc: "key prefix inside the bucket"},
		{Env: "AGENTHOST_S3_PATH_STYLE", File: "objectStorage.pathStyle", Kind: Bool, Default: "false", Commands: store + " backup blobs", Doc: "path-style addressing (MinIO and the like)"},
		{Env: "AGENTHOST_S3_ACCESS_KEY_ID", File: "objectStorage.accessKeyId", Commands: store + " backup blobs", Doc: "access key id"},
		{Env: "AGENTHOST_S3_SECRET_ACCESS_KEY", File: "objectStorage.secretAccessKey", Commands: store + " backup blobs", Secret: true, Doc: "the secret access key; never logged"},
		{Env: "AGENTHOST_S3_SESSION_TOKEN", File: "objectStorage.sessionToken", Commands: store + " backup blobs", Secret: true, Doc: "for temporary credentials"},
		{Env: "AGENTHOST_S3_ENCRYPTION", File: "objectStorage.encryption", Default: "none", Commands: store + " backup blobs", Doc: "`none`, `sse-s3` or `sse-kms`"},
		{Env: "AGENTHOST_S3_KMS_KEY_ID", File: "objectStorage.kmsKeyId", Commands: store + " backup blobs", Doc: "KMS key for `sse-kms`"},
		{Env: "AGENTHOST_S3_PART_SIZE", File: "objectStorage.partSize", Kind: Int, Default: "16777216", Commands: store + " backup blobs", Doc: "bytes per multipart part, 5 MiB to 5 GiB"},
		{Env: "AGENTHOST_S3_CONCURRENCY", File: "objectStorage.concurrency", Kind: Int, Default: "4", Commands: store + " backup blobs", Doc: "parts of one upload in flight, 1 to 64"},

		// The client commands.
		{Flag: "url", Env: "AGENTHOST_URL", Default: "http://127.0.0.1:8080", Commands: "run plugin", Doc: "the server `run` and `plugin install` talk to (`AGENTHOST_SERVER`, the earlier name, still works for `plugin`)"},
		{Flag: "token", Env: "AGENTHOST_TOKEN", Commands: "run plugin", Secret: true, Doc: "an API token, `ahk_…`"},
		{Flag: "workspace", Env: "AGENTHOST_WORKSPACE", Commands: "run", Doc: "the workspace id; default: the caller's only workspace"},
	}
}

// Sections are the configuration file's top-level keys; each one belongs
// to one part of agenthost, which decodes it refusing unknown keys.
func Sections() []string {
	return []string{"llm", "signIn", "webSearch", "sqlQuery", "objectStorage"}
}
