package main

import (
	"context"
	"fmt"
	"io"
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
		pluginUsage(stderr)
		return fmt.Errorf("plugin: want a subcommand")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		pluginUsage(stdout)
		return nil
	}
	c, ok := cmds[args[0]]
	if !ok {
		pluginUsage(stderr)
		return fmt.Errorf("plugin: unknown subcommand %q", args[0])
	}
	return c(ctx, args[1:], stdout, stderr)
}

// pluginUsage lists the plugin subcommands (-h after one lists its flags).
func pluginUsage(w io.Writer) {
	fmt.Fprint(w, `  plugin new NAME [-kind K]      scaffold a plugin folder (tool, extractor) with fixtures; -lang assemblyscript
  plugin build DIR [-o FILE]     compile a plugin (Go, or AssemblyScript with asconfig.json) and embed its manifest;
                                 -wasm MODULE takes a module another toolchain compiled
  plugin test DIR                run a plugin's fixtures with simulated capabilities
  plugin call FILE TOOL JSON     run one tool of a plugin and print the result
  plugin inspect FILE            print a plugin's manifest, capabilities, hash, signature
  plugin sign FILE -key KEY      sign a plugin (ed25519)
  plugin verify FILE -pub KEY    check a plugin's signature
  plugin keygen -o PREFIX        make an ed25519 key pair
  plugin warm [-parallel N]      compile the built-in plugins into the cache before a start
  plugin install|upgrade|remove  change the plugins of a running server (-server URL -token T FILE)
  plugin audit [-plugin NAME]    the running server's record of installs, upgrades and removals
`)
}
