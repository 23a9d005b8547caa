// Package procguard hides a running host from the programs it starts and
// from other processes of its user. A host keeps secrets in its memory (the
// key that seals every tenant's credentials, model API keys) and had them
// in its initial environment, which /proc/PID/environ shows whatever
// os.Unsetenv did later. Undumpable makes /proc/PID/environ, /proc/PID/mem
// and the like of the host readable only with CAP_SYS_PTRACE, so that a
// process of the same user (a stdio MCP server the host started) cannot
// read them; a process of another user cannot anyway.
package procguard
