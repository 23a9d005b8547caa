package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/signature"
)

// pluginFlags are the flags of commands that run plugins (serve, worker).
type pluginFlags struct {
	dir           *string
	allowUnsigned *bool
	trust         *stringList
	// caps are the host capabilities that reach the server's services.
	caps *builtin.Capabilities
}

func addPluginFlags(fs *flag.FlagSet) pluginFlags {
	pf := pluginFlags{
		dir:           fs.String("plugins", envOr("AGENTHOST_PLUGINS", ""), "directory of third-party plugins (*.wasm)"),
		allowUnsigned: fs.Bool("allow-unsigned", false, "load third-party plugins that carry no signature (a bad signature is still refused)"),
		trust:         &stringList{},
		caps:          builtin.NewCapabilities(),
	}
	fs.Var(pf.trust, "trust", "public key file whose signatures third-party plugins may carry (repeatable)")
	return pf
}

// open makes the plugin host with the built-in plugins and the operator's,
// its compile cache in the data directory. The caller closes it.
func (pf pluginFlags) open(ctx context.Context, dataDir string, logger *slog.Logger) (*wasm.Host, error) {
	reg, err := wasm.NewRegistry(pf.caps.List(wasm.EgressOptions{})...)
	if err != nil {
		return nil, err
	}
	trust, err := loadTrust(*pf.trust)
	if err != nil {
		return nil, err
	}
	host, err := wasm.New(ctx, wasm.NewConfig().
		WithVerifier(signature.Verifier{Trust: trust}).
		WithLogger(logger).
		WithCapabilities(reg).
		WithAllowUnsigned(*pf.allowUnsigned).
		WithCompilationCacheDir(filepath.Join(dataDir, "wasm-cache")))
	if err != nil {
		return nil, err
	}
	srcs, err := builtin.Sources()
	if err != nil {
		host.Close(ctx)
		return nil, err
	}
	if len(srcs) == 0 {
		logger.Warn("this binary carries no built-in plugins; build it with `make build`")
	}
	for _, s := range srcs {
		if _, err := host.Load(ctx, s); err != nil {
			host.Close(ctx)
			return nil, fmt.Errorf("built-in plugin: %w", err)
		}
	}
	if *pf.dir != "" {
		if _, err := host.LoadDir(ctx, *pf.dir); err != nil {
			// A refused third-party plugin is reported, not fatal: the rest still serve.
			logger.Error("some plugins were refused", "dir", *pf.dir, "err", err)
		}
	}
	return host, nil
}
