package main

import (
	"flag"
	"fmt"
	"maps"
	"os"

	"github.com/agenthost/agenthost/host/knowledge/extract"
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
	fs.Var(ef.items, "extractor", settingUsage("extractor", "instead of the built-in one, which the plugin must declare (repeatable)"))
	return ef
}

// choice is the operator's choice: the variable's, with the flags winning
// type by type; a malformed one is refused before anything is opened (the
// server checks it against the loaded plugins).
func (ef extractorFlags) choice() (extract.OperatorChoice, error) {
	choice, err := extract.ParseOperatorChoice(os.Getenv(extractorsEnv))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", extractorsEnv, err)
	}
	flags, err := extract.ParseOperatorChoice(*ef.items...)
	if err != nil {
		return nil, fmt.Errorf("-extractor: %w", err)
	}
	maps.Copy(choice, flags)
	return choice, nil
}
