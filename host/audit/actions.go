package audit

// The actions the host records. Names are stable: exports, alerts and
// searches depend on them; a new action gets a new name.
const (
	// Sign-ins (the UI's token sign-in; other helpers' OIDC and passkeys
	// use the same names).
	SignInSucceeded = "signin.succeeded"
	SignInFailed    = "signin.failed"
	SignedOut       = "signin.signed_out"

	TokenCreated = "token.created"
	TokenRevoked = "token.revoked"

	// MembershipSet gives a user a role in a workspace (new or changed:
	// the detail has from and to); MembershipRemoved takes it away.
	MembershipSet     = "membership.set"
	MembershipRemoved = "membership.removed"

	PluginInstalled      = "plugin.installed"
	PluginUpgraded       = "plugin.upgraded"
	PluginUpgradeRefused = "plugin.upgrade_refused"
	PluginRemoved        = "plugin.removed"
	// GrantChanged: what a plugin is granted (hosts, capabilities, limits)
	// changed, by an install, upgrade or removal; the detail lists it.
	GrantChanged = "grant.changed"
	// ToolSetChanged: the tools a workspace offers changed.
	ToolSetChanged = "toolset.changed"

	MCPServerAdded   = "mcp_server.added"
	MCPServerRemoved = "mcp_server.removed"

	// MCP clients that sign in like people (host/oauthserver): a person
	// authorised a client in a workspace (the detail has the client and
	// scopes), a grant was revoked (by its person, or by the client's
	// revocation request), and a refresh token or code presented twice,
	// which revokes its grant (theft).
	MCPClientAuthorized = "mcp_client.authorized"
	MCPClientRevoked    = "mcp_client.revoked"
	MCPClientReuse      = "mcp_client.token_reused"

	ConnectionCreated = "connection.created"
	ConnectionRevoked = "connection.revoked"

	LimitsChanged = "billing.limits_changed"

	// ToolCalled is a call of a tool with external side effects (a
	// connector's or an MCP server's tool that is not read-only).
	ToolCalled = "tool.called"

	// ToolPolicyChanged: a workspace's approval policy of a tool changed
	// (detail: tool, from, to). ApprovalApproved, ApprovalDenied and
	// ApprovalExpired are the decisions on a tool call that waited for a
	// person (detail: tool, call, arguments summarised, edited, reason).
	ToolPolicyChanged = "tool_policy.changed"
	ApprovalApproved  = "approval.approved"
	ApprovalDenied    = "approval.denied"
	ApprovalExpired   = "approval.expired"

	SCIMTokenCreated    = "scim.token_created"
	SCIMTokenRevoked    = "scim.token_revoked"
	SCIMUserCreated     = "scim.user_created"
	SCIMUserUpdated     = "scim.user_updated"
	SCIMUserDeactivated = "scim.user_deactivated"
	SCIMUserReactivated = "scim.user_reactivated"
	SCIMUserDeleted     = "scim.user_deleted"
	SCIMGroupCreated    = "scim.group_created"
	SCIMGroupUpdated    = "scim.group_updated"
	SCIMGroupDeleted    = "scim.group_deleted"
)

// Actions lists every action above, for documentation and for the test
// that each is recorded where it happens.
func Actions() []string {
	return []string{
		SignInSucceeded, SignInFailed, SignedOut,
		TokenCreated, TokenRevoked,
		MembershipSet, MembershipRemoved,
		PluginInstalled, PluginUpgraded, PluginUpgradeRefused, PluginRemoved, GrantChanged, ToolSetChanged,
		MCPServerAdded, MCPServerRemoved,
		MCPClientAuthorized, MCPClientRevoked, MCPClientReuse,
		ConnectionCreated, ConnectionRevoked,
		LimitsChanged,
		ToolCalled,
		ToolPolicyChanged, ApprovalApproved, ApprovalDenied, ApprovalExpired,
		SCIMTokenCreated, SCIMTokenRevoked,
		SCIMUserCreated, SCIMUserUpdated, SCIMUserDeactivated, SCIMUserReactivated, SCIMUserDeleted,
		SCIMGroupCreated, SCIMGroupUpdated, SCIMGroupDeleted,
	}
}
