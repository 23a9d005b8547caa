// Package mcpclient adds external Model Context Protocol servers to
// workspaces' tool sets. An admin registers a server (a command run over
// stdio, or a streamable-HTTP URL with its auth) for one workspace or every
// workspace of a tenant; its tools then appear beside the plugins' tools,
// prefixed with the server's name, with the same argument validation,
// tracing, billing and read-only treatment. Every server is hostile: a
// stdio server runs only as the operator allowed, with no variable the
// operator did not allow for its command, in a fresh directory outside the
// data directory, as an unprivileged user when the host is root, unable to
// read the host's memory or environment (host/procguard); its answers are
// bounded in time and size, protocol garbage becomes an error result, and a
// server that dies is restarted on the next call or, after repeated
// failures, marked failed for a while — never a crash of the host.
package mcpclient
