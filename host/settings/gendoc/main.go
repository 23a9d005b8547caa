// Command gendoc writes the settings table of docs/configuration.md from
// the registry (settings.All): run by `go generate ./host/settings`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/agenthost/agenthost/host/settings"
)

func main() {
	out := flag.String("o", "docs/configuration.md", "the page to update")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	page, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	next, err := settings.Splice(string(page))
	if err != nil {
		return err
	}
	if next == string(page) {
		return nil
	}
	return os.WriteFile(path, []byte(next), 0o644)
}
