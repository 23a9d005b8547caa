package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/agenthost/agenthost/host/procguard"
	"github.com/agenthost/agenthost/host/server"
)

// secretKeyFileEnv names a file holding the secret key, instead of the key
// itself in AGENTHOST_SECRET_KEY (where /proc/PID/environ keeps it for the
// life of the process).
const secretKeyFileEnv = "AGENTHOST_SECRET_KEY_FILE"

// secretEnvName says whether an environment variable holds a secret of the
// host's: AGENTHOST_SECRET_KEY, model and search API keys, OAuth client
// secrets, tokens, passwords, the database URL (which carries its
// password). They are taken out of the process's environment at start-up.
func secretEnvName(k string) bool {
	if !strings.HasPrefix(k, "AGENTHOST_") {
		return false
	}
	for _, w := range []string{"SECRET", "TOKEN", "PASSWORD", "_KEY", "_DSN", "DATABASE_URL"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// hideSecrets is how a long-running command (serve, worker) keeps its
// secrets from what it runs. It returns the environment as it was (with
// AGENTHOST_SECRET_KEY read from keyFile, or AGENTHOST_SECRET_KEY_FILE,
// when given) for the command to read its configuration from; the secret
// variables (secretEnvName, and those the file names) are removed from
// the process's environment, so that no program it starts inherits them;
// and the process is made undumpable, because /proc/PID/environ keeps the
// initial environment whatever is removed, and /proc/PID/mem the values
// read: other processes of its user (a stdio MCP server) cannot read
// either, only root with CAP_SYS_PTRACE can.
func hideSecrets(keyFile string, file server.File) (func(string) string, error) {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	if keyFile != "" {
		env[secretKeyFileEnv] = keyFile
	}
	key, err := secretKey(func(k string) string { return env[k] })
	if err != nil {
		return nil, err
	}
	env["AGENTHOST_SECRET_KEY"] = key
	names := file.SecretEnv()
	for k := range env {
		if secretEnvName(k) {
			names = append(names, k)
		}
	}
	for _, k := range names {
		if err := os.Unsetenv(k); err != nil {
			return nil, fmt.Errorf("removing %s from the environment: %w", k, err)
		}
	}
	if err := procguard.Undumpable(); err != nil {
		return nil, err
	}
	return func(k string) string { return env[k] }, nil
}
