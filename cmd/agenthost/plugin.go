package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// pluginCommands lists the `agenthost plugin` subcommands; each lives in its own
// file (plugin_build.go, plugin_inspect.go, ...).
func pluginCommands() map[string]command {
	return map[string]command{
		// one line per subcommand, e.g. "build": pluginBuildCmd,
		"audit":   pluginAuditCmd,
		"build":   pluginBuildCmd,
		"call":    pluginCallCmd,
		"inspect": pluginInspectCmd,
		"install": pluginInstallCmd,
		"keygen":  pluginKeygenCmd,
		"new":     pluginNewCmd,
		"remove":  pluginRemoveCmd,
		"sign":    pluginSignCmd,
		"test":    pluginTestCmd,
		"upgrade": pluginUpgradeCmd,
		"verify":  pluginVerifyCmd,
		"warm":    pluginWarmCmd,
	}
}

func pluginCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmds := pluginCommands()
	if len(args) == 0 {
		names := make([]string, 0, len(cmds))
		for n := range cmds {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("plugin: want a subcommand: %s", strings.Join(names, ", "))
	}
	c, ok := cmds[args[0]]
	if !ok {
		return fmt.Errorf("plugin: unknown subcommand %q", args[0])
	}
	return c(ctx, args[1:], stdout, stderr)
}
