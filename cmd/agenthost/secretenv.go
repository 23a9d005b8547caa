package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenthost/agenthost/host/procguard"
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

// configSecretEnv are the variables the configuration file names as
// holding secrets: the values of its keys ending in "Env" (a model
// provider's or webSearch's apiKeyEnv, a database's dsnEnv).
func configSecretEnv(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading configuration: %w", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("configuration %s: %w", path, err)
	}
	var out []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if strings.HasSuffix(k.Value, "Env") && v.Kind == yaml.ScalarNode && v.Value != "" {
					out = append(out, v.Value)
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
	return out, nil
}

// hideSecrets is how a long-running command (serve, worker) keeps its
// secrets from what it runs. It returns the environment as it was (with
// AGENTHOST_SECRET_KEY read from keyFile, or AGENTHOST_SECRET_KEY_FILE,
// when given) for the command to read its configuration from; the secret
// variables (secretEnvName, and those configPath names) are removed from
// the process's environment, so that no program it starts inherits them;
// and the process is made undumpable, because /proc/PID/environ keeps the
// initial environment whatever is removed, and /proc/PID/mem the values
// read: other processes of its user (a stdio MCP server) cannot read
// either, only root with CAP_SYS_PTRACE can.
func hideSecrets(keyFile, configPath string) (func(string) string, error) {
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
	names, err := configSecretEnv(configPath)
	if err != nil {
		return nil, err
	}
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

// privateDataDir makes the data directory, or makes an existing one 0700:
// it holds the embedded database and every tenant's files, and stdio MCP
// servers run as another user (nobody) that must not read them.
func privateDataDir(dir string, logger *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, fi.Mode().Perm()&0o700); err != nil {
			return fmt.Errorf("making the data directory private: %w", err)
		}
		logger.Info("data directory made private to the host's user", "dir", dir, "was", fi.Mode().Perm().String())
	}
	return nil
}
