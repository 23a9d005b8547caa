// Package mcpconfig holds the registrations of external MCP servers: a
// Server, its Config in the clear and its sealed Secrets, their validation
// and the operator's command allow-list. They are plain values, so the SQL
// store (host/store) keeps registrations without importing the MCP client
// (host/mcpclient: processes, HTTP sessions, tool sources) above it.
package mcpconfig
