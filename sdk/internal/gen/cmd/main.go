// Command cmd writes package sdk's generated client from the OpenAPI
// document; `go generate ./sdk/...` runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agenthost/agenthost/sdk/internal/gen"
)

func main() {
	spec := flag.String("spec", "../host/api/openapi.json", "the OpenAPI document")
	out := flag.String("out", ".", "the folder of package sdk")
	flag.Parse()
	if err := run(*spec, *out); err != nil {
		fmt.Fprintln(os.Stderr, "sdk gen:", err)
		os.Exit(1)
	}
}

func run(spec, out string) error {
	raw, err := os.ReadFile(spec)
	if err != nil {
		return err
	}
	files, err := gen.Generate(raw)
	if err != nil {
		return err
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(out, name), src, 0o644); err != nil {
			return err
		}
	}
	return nil
}
