package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/webui"
)

// routes lists every route of the API, so the surface is visible at a glance.
// streams are the event streams, which end when the server shuts down.
func routes(app *fiber.App, d Deps, streams *eventStreams) {
	app.Get("/status", handleStatus(d))
	app.Get("/healthz", handleHealth(d.Ready))
	v1 := app.Group("/api/v1")
	v1.Get("/openapi.json", handleOpenAPI())
	if d.UI == nil || d.Auth == nil {
		app.Get("/", handleStatus(d))
	}
	if d.SCIM != nil {
		// SCIM authenticates by the tenant's SCIM token, not by users'.
		for _, m := range []string{fiber.MethodGet, fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch, fiber.MethodDelete} {
			app.Add(m, "/scim/v2/:resource", d.SCIM)
			app.Add(m, "/scim/v2/:resource/:id", d.SCIM)
		}
	}
	if d.Auth == nil {
		return // without an authenticator only health and this description are served
	}
	// Routes registered after the authenticated group's middleware pass
	// through it (Fiber runs handlers in registration order): sign-in and
	// the session come first.
	if d.UI != nil {
		// The page answers its own routes (the browser's history); what it
		// shows there comes from the API, under the caller's scope.
		for _, p := range webui.Pages() {
			app.Get(p, d.UI.HandlePage())
		}
		app.Get("/assets/:file", d.UI.HandleAsset())
		app.Get("/favicon.ico", d.UI.HandleFavicon())
		v1.Post("/session", d.UI.HandleSignIn(decodeJSON))
		v1.Get("/session", d.UI.HandleSession())
		// A fresh server's first organisation: the setup link its log shows.
		v1.Get("/setup", d.UI.HandleSetupState())
		v1.Post("/setup", d.UI.HandleSetup(decodeJSON))
		if d.Passkeys != nil {
			// Passkey sign-in and an invitation's passkey registration
			// come before the authenticated group (passkeys.go).
			v1.Post("/session/passkey/options", handlePasskeySignInOptions(d.Passkeys))
			v1.Post("/session/passkey", handlePasskeySignIn(d.Passkeys, d.UI, d.Audit))
			v1.Post("/invitation/passkey/options", handleInvitationPasskeyOptions(d.Passkeys))
			v1.Post("/invitation/passkey", handleInvitationPasskey(d.Passkeys, d.UI, d.Audit))
		}
		if d.Passkeys != nil && d.SecondFactor != nil {
			// A pending session's second step: before the authenticated
			// group, which refuses pending sessions (secondfactor.go).
			secondFactorRoutes(v1, d)
		}
		// Sign-in through identity providers and invitation links (signin.go).
		signInRoutes(app, v1, d.SignIn, d.Invitations)
	}
	if d.Connections != nil {
		// Browsers come back from the provider's site without the
		// SameSite=Strict cookie: the callback authenticates by itself.
		v1.Get("/connections/callback", handleConnectionCallback(d.Connections, d.Auth, d.UI, d.Audit))
	}
	if d.OAuth != nil {
		// The MCP clients' authorization server (host/oauthserver): its
		// endpoints are public; the consent page reads the session itself.
		d.OAuth.Routes(app)
	}
	authed := v1.Group("", requireAuth(d.Auth, d.UI))
	if d.UI != nil {
		authed.Delete("/session", recordSignOut(d.UI.HandleSignOut(), d.Audit))
		authed.Post("/session/switch", d.UI.HandleSwitch(decodeJSON))
	}
	peopleRoutes(authed, d)
	// The plugin listings name every plugin, its version, capabilities and
	// hosts: what an attacker would look for first, so they need a token.
	authed.Get("/plugins", handlePlugins(d.Plugins))
	// Installs change what every tenant's agents run: admins of the
	// operator's tenants only (plugin_installs.go).
	authed.Post("/plugins", handleInstallPlugin(d.PluginAdmins))
	authed.Get("/plugins/audit", handlePluginAudit(d.PluginAdmins))
	authed.Put("/plugins/:name", handleUpgradePlugin(d.PluginAdmins))
	authed.Delete("/plugins/:name", handleRemovePlugin(d.PluginAdmins))
	authed.Get("/tools", handleTools(d.Plugins))
	// A tenant admin's invitations (signin.go).
	authed.Post("/invitations", handleInvite(d.Invitations))
	authed.Get("/invitations", handleListInvitations(d.Invitations))
	authed.Delete("/invitations/:id", handleRevokeInvitation(d.Invitations))
	if d.Tokens != nil {
		authed.Get("/tokens", handleListTokens(d.Tokens))
		authed.Delete("/tokens/:id", handleRevokeToken(d.Tokens, d.Audit))
	}
	if d.MCPClients != nil {
		// The MCP clients a person authorised, in their settings.
		authed.Get("/me/mcp-clients", handleListMCPClients(d.MCPClients))
		authed.Delete("/me/mcp-clients/:id", handleRevokeMCPClient(d.MCPClients, d.Audit))
	}
	if d.AuditLog != nil {
		authed.Get("/audit", handleAuditSearch(d.AuditLog))
		authed.Get("/audit/export", handleAuditExport(d.AuditLog, d.Logger))
	}
	if d.MCPServers != nil {
		authed.Get("/mcp-servers", handleListMCPServers(d.MCPServers))
		authed.Post("/mcp-servers", handleAddMCPServer(d.MCPServers, d.Audit))
		authed.Get("/mcp-servers/:id", handleGetMCPServer(d.MCPServers))
		authed.Delete("/mcp-servers/:id", handleRemoveMCPServer(d.MCPServers, d.Audit))
	}
	if d.Connections != nil {
		authed.Get("/connections", handleListConnections(d.Connections))
		authed.Post("/connections", handleCreateConnection(d.Connections, d.Audit))
		authed.Post("/connections/authorize", handleAuthorizeConnection(d.Connections))
		authed.Get("/connections/providers", handleConnectionProviders(d.Connections))
		authed.Delete("/connections/:id", handleRevokeConnection(d.Connections, d.Audit))
	}
	if d.DataSources != nil {
		authed.Get("/datasources", handleListDataSources(d.DataSources))
		authed.Post("/datasources", handleCreateDataSource(d.DataSources))
		authed.Get("/datasources/:id", handleGetDataSource(d.DataSources))
		authed.Delete("/datasources/:id", handleDeleteDataSource(d.DataSources))
		authed.Post("/datasources/:id/sync", handleSyncDataSource(d.DataSources))
		authed.Get("/datasources/:id/sync", handleDataSourceSync(d.DataSources))
	}
	if d.Billing != nil {
		authed.Get("/billing/usage", handleUsageReport(d.Billing))
		authed.Get("/billing/budget", handleBudget(d.Billing))
	}
	if d.Files == nil || d.Workspaces == nil {
		return // a server without storage (tests of the plugin surface)
	}

	authed.Get("/workspaces", handleWorkspaces(d.Workspaces))
	authed.Get("/workspaces/:ws/folders", handleListFolders(d.Files))
	authed.Post("/workspaces/:ws/folders", handleCreateFolder(d.Files))
	// Requests that start work count against the tenant's rate.
	rate := rateLimited(d.Rate)
	authed.Post("/workspaces/:ws/files", rate, handleUpload(d.Files, d.FilePasswords, d.Audit))
	authed.Patch("/folders/:id", handleUpdateFolder(d.Files))
	authed.Delete("/folders/:id", handleDeleteFolder(d.Files))
	authed.Get("/files", handleListFiles(d.Files))
	authed.Get("/files/:id", handleGetFile(d.Files, d.People))
	authed.Get("/files/:id/content", handleFileContent(d.Files))
	authed.Patch("/files/:id", handleUpdateFile(d.Files))
	authed.Delete("/files/:id", handleDeleteFile(d.Files))
	fileVersionRoutes(authed, d)
	if d.Knowledge != nil && d.IndexStates != nil {
		authed.Get("/workspaces/:ws/search", handleSearch(d.Knowledge, d.Workspaces))
		authed.Post("/workspaces/:ws/search", handleSearch(d.Knowledge, d.Workspaces))
		authed.Get("/files/:id/index", handleFileIndex(d.IndexStates))
	}
	if d.FilePasswords != nil {
		authed.Post("/files/:id/password", rate, handleFilePassword(d.FilePasswords, d.Audit))
	}
	if d.Reindexer != nil && d.IndexStates != nil {
		authed.Post("/files/:id/reindex", rate, handleReindexFile(d.Files, d.Workspaces, d.IndexStates, d.Reindexer, d.Audit))
	}
	if d.Voice != nil {
		authed.Post("/workspaces/:ws/voice/transcribe", handleTranscribe(d.Voice, d.Workspaces))
		authed.Post("/workspaces/:ws/voice/synthesize", handleSynthesize(d.Voice, d.Workspaces))
	}
	if d.ContainerEntries != nil {
		authed.Get("/files/:id/entries", handleFileEntries(d.ContainerEntries))
	}
	if d.PagePDFs != nil {
		authed.Get("/files/:id/pages/:page/pdf", handlePagePDF(d.Files, d.PagePDFs))
	}
	if d.FileObjects != nil {
		authed.Get("/files/:id/objects", handleFileObjects(d.Files, d.FileObjects))
	}
	if d.Workflows == nil || d.Workspace == nil || d.Tools == nil || d.WorkspaceTools == nil {
		return
	}

	authed.Get("/workspaces/:ws/tools", handleWorkspaceTools(d.WorkspaceTools, d.Tools))
	authed.Post("/workspaces/:ws/tools/:name", rate, handleCallTool(d.WorkspaceTools, d.Tools))
	authed.Get("/workspaces/:ws/settings", handleWorkspaceSettings(d.Workspace))
	authed.Put("/workspaces/:ws/settings", handleSetWorkspaceSettings(d.Workspace))
	authed.Get("/workspaces/:ws/tool-policies", handleToolPolicies(d.Workspace))
	authed.Put("/workspaces/:ws/tool-policies/:tool", handleSetToolPolicy(d.Workspace))
	authed.Get("/workspaces/:ws/models", handleWorkspaceModels(d.Workspace))
	authed.Put("/workspaces/:ws/models", handleSetWorkspaceModels(d.Workspace))
	authed.Get("/workflows/:id/model", handleConversationModel(d.Workspace))
	authed.Put("/workflows/:id/model", handleSetConversationModel(d.Workspace))
	authed.Post("/workspaces/:ws/workflows", rate, requireBudget(d.Billing), handleStartInWorkspace(d.Workspace))
	authed.Post("/workflows/start", rate, requireBudget(d.Billing), handleStart(d.Workspace, d.Workflows))
	authed.Get("/workflows", handleListWorkflows(d.Workflows))
	authed.Get("/workflows/:id", handleGetWorkflow(d.Workflows, d.People))
	authed.Patch("/workflows/:id", handleUpdateWorkflow(d.Workflows))
	authed.Delete("/workflows/:id", handleDeleteWorkflow(d.Workspace, d.Workflows))
	authed.Get("/workflows/:id/status", handleWorkflowStatus(d.Workflows))
	authed.Post("/workflows/:id/stop", handleStopWorkflow(d.Workspace))
	authed.Get("/workflows/:id/approvals", handleApprovals(d.Workspace))
	authed.Post("/workflows/:id/approvals/:aid", handleDecideApproval(d.Workspace))
	authed.Get("/workflows/:id/events", handleEvents(d.Workflows, streams))
	authed.Get("/workflows/:id/logs", handleLogs(d.Workflows))
	if d.Billing != nil {
		authed.Get("/workflows/:id/trace", handleTrace(d.Workflows, d.Billing))
	}
	if d.Background != nil {
		authed.Post("/workspaces/:ws/background", rate, requireBudget(d.Billing), handleStartBackground(d.Background))
		authed.Get("/background", handleListBackground(d.Background))
		authed.Get("/background/:id", handleGetBackground(d.Background))
		authed.Post("/background/:id/cancel", handleCancelBackground(d.Background))
	}
	if d.Notifications != nil {
		authed.Get("/me/notifications", handleNotifications(d.Notifications))
		authed.Post("/me/notifications/read", handleMarkNotificationsRead(d.Notifications))
		authed.Get("/me/notifications/events", handleNotificationEvents(d.Notifications, streams))
	}
	authed.Get("/workflows/:id/messages", handleMessages(d.Workflows))
	authed.Delete("/workflows/:id/messages/:mid", handleDeleteMessage(d.Workflows))
	authed.Post("/workflows/:id/messages/:mid/regenerate", rate, requireBudget(d.Billing), handleRegenerate(d.Workspace))
	authed.Put("/workflows/:id/messages/:mid/feedback", handleFeedback(d.Workflows))
	authed.Put("/workflows/:id/branch", handleSelectBranch(d.Workflows))
	authed.Delete("/workflows/:id/messages/:mid/files/:fid", handleRemoveMessageFile(d.Workflows))
}

// peopleRoutes are people management (tenant admins) and a person's own
// settings: passkeys, sessions, personal API tokens, preferences (people.go,
// passkeys.go).
func peopleRoutes(authed fiber.Router, d Deps) {
	if d.Passkeys != nil {
		authed.Get("/me/passkeys", handleListPasskeys(d.Passkeys))
		authed.Post("/me/passkeys/options", handlePasskeyOptions(d.Passkeys))
		authed.Post("/me/passkeys", handleAddPasskey(d.Passkeys, d.Audit))
		authed.Delete("/me/passkeys/:id", handleRemovePasskey(d.Passkeys, d.Audit))
	}
	if d.SecondFactor != nil {
		authed.Get("/tenant/second-factor", handleGetSecondFactorSetting(d.SecondFactor))
		authed.Put("/tenant/second-factor", handleSetSecondFactorSetting(d.SecondFactor, d.Audit))
	}
	if d.People == nil {
		return
	}
	authed.Get("/me/sessions", handleMySessions(d.People, d.UI))
	authed.Delete("/me/sessions", handleEndOtherSessions(d.People, d.UI, d.Audit))
	authed.Delete("/me/sessions/:id", handleEndMySession(d.People, d.Audit))
	authed.Get("/me/tokens", handleMyTokens(d.People))
	authed.Post("/me/tokens", handleCreateMyToken(d.People, d.Audit))
	authed.Delete("/me/tokens/:id", handleRevokeMyToken(d.People, d.Audit))
	authed.Get("/me/preferences", handleMyPreferences(d.People))
	authed.Put("/me/preferences", handleSetMyPreferences(d.People))
	authed.Get("/people", handleListPeople(d.People))
	authed.Patch("/people/:id", handlePatchPerson(d.People, d.Audit))
	authed.Put("/people/:id/workspaces/:ws", handleSetPersonWorkspace(d.People, d.Audit))
	authed.Delete("/people/:id/workspaces/:ws", handleRemovePersonWorkspace(d.People, d.Audit))
}
