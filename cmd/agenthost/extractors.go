package main

import (
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"

	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/wasm"
)

// extractorFlags is the operator's choice of extractor plugins by MIME type
// (serve and worker, which both index): built-ins win unless the operator
// names another plugin for a type.
type extractorFlags struct{ items *stringList }

// extractorsEnv holds the choice as "mime=plugin,mime=plugin"; -extractor
// flags win over it type by type.
const extractorsEnv = "AGENTHOST_EXTRACTORS"

func addExtractorFlags(fs *flag.FlagSet) extractorFlags {
	ef := extractorFlags{items: &stringList{}}
	fs.Var(ef.items, "extractor", "MIME=PLUGIN: extract that MIME type (or family, text/*) with that plugin instead of the built-in one; "+
		"the plugin must declare the type (repeatable; also "+extractorsEnv+"=\"mime=plugin,...\", which the flags override)")
	return ef
}

// open returns the extractors over host's loaded plugins with the
// operator's choice, or refuses a choice that does not fit them (an unknown
// plugin, one that does not declare the type); it logs who extracts what.
func (ef extractorFlags) open(host *wasm.Host, logger *slog.Logger) (*knowledge.Extractors, error) {
	choice, err := knowledge.ParseExtractorChoice(os.Getenv(extractorsEnv))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", extractorsEnv, err)
	}
	flags, err := knowledge.ParseExtractorChoice(*ef.items...)
	if err != nil {
		return nil, fmt.Errorf("-extractor: %w", err)
	}
	maps.Copy(choice, flags)
	ex := knowledge.NewExtractors(host).WithChoice(choice).WithLogger(logger)
	if err := ex.Check(); err != nil {
		return nil, fmt.Errorf("refusing the operator's choice of extractors: %w", err)
	}
	return ex, nil
}
