// Command agenthost is the one binary of agenthost: the server, the background
// worker, database migrations and the plugin toolchain.
//
//	agenthost serve                    run the HTTP server (and workers)
//	agenthost worker                   run background workers only
//	agenthost migrate                  apply database migrations
//	agenthost blobs copy               copy blobs into object storage (S3)
//	agenthost admin ...                tenants, users, workspaces, roles, API tokens
//	agenthost run "PROMPT" -file F     run a workflow on a server and follow it
//	agenthost plugin build DIR         compile a plugin and embed its manifest
//	agenthost plugin inspect FILE      print manifest, capabilities, hash, signature
//	agenthost plugin call FILE TOOL JSON  run one tool and print the result
//	agenthost plugin sign|verify ...   ed25519 signatures
//	agenthost config                   the effective configuration, secrets masked
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal starts a graceful stop; a second one ends the process
	// at once (the default action, restored here).
	context.AfterFunc(ctx, stop)
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "agenthost:", err)
		os.Exit(1)
	}
}

// command is one subcommand: it gets the remaining arguments.
type command func(ctx context.Context, args []string, stdout, stderr io.Writer) error

func commands() map[string]command {
	return map[string]command{
		"plugin":  pluginCmd,
		"serve":   serveCmd,
		"worker":  workerCmd,
		"migrate": migrateCmd,
		"blobs":   blobsCmd,
		"admin":   adminCmd,
		"load":    loadCmd,
		"run":     runCmd,
		"backup":  backupCmd,
		"restore": restoreCmd,
		"config":  configCmd,
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		return nil
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		usage(stderr)
		return fmt.Errorf("unknown command %q", args[0])
	}
	return cmd(ctx, args[1:], stdout, stderr)
}

// parseArgs parses a command's flags and refuses arguments it does not take.
// Every command calls it before it opens anything, so that a typo or a
// request for help never creates, opens or migrates a data directory. It
// returns false, with no error, when -h asked for the usage (which the flag
// package has printed): the command then does nothing.
func parseArgs(fs *flag.FlagSet, args []string) (bool, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return false, nil
		}
		return false, err
	}
	if fs.NArg() > 0 {
		return false, fmt.Errorf("%s: unexpected argument %q (flags come as -name value)", fs.Name(), fs.Arg(0))
	}
	return true, nil
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: agenthost COMMAND [ARGS]   (COMMAND -h lists its flags)

commands:
  serve                          run the HTTP server and background workers
  worker                         run background workers only
  migrate                        apply database migrations
  blobs copy                     copy the database's blobs into the configured object storage (S3)
  admin bootstrap|user|workspace|member|token|tools|limits|usage|mcp|scim-token|scim-map|storage   tenants, users, workspaces, roles, tokens, spending, MCP servers, SCIM, storage
  backup -data DIR -to PATH      a consistent copy of the embedded database and its blobs, while serve runs
  restore -from PATH -data DIR   bring a backup back (an empty DIR, or -force)
  load -database URL [-n 100]    a bounded load on this machine: hosts on one PostgreSQL, a scripted model
  run "PROMPT" [-file FILE]...   run a workflow on a server and follow it (tool calls, cost, the answer)
  config [-FLAG VALUE]...        print the effective configuration (secrets masked) and where each value comes from
  plugin SUBCOMMAND              build, test, sign and manage plugins:
`)
	pluginUsage(w)
}
