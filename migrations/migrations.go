// Package migrations holds the SQL schema of agenthost, one folder per database
// dialect (sqlite, postgres). Files are goose migrations named
// NNNNN_name.sql; they are forward-only (no Down sections) and applied in
// order by `agenthost migrate` and, for the embedded store, on start-up.
//
// Both folders describe the same schema: a migration added to one dialect is
// added to the other with the same number, and the store's conformance suite
// runs against both.
package migrations

import (
	"embed"
	"fmt"
	"io/fs"
)

//go:embed sqlite/*.sql postgres/*.sql
var files embed.FS

// FS returns the migrations of one dialect ("sqlite" or "postgres").
func FS(dialect string) (fs.FS, error) {
	switch dialect {
	case "sqlite", "postgres":
		return fs.Sub(files, dialect)
	}
	return nil, fmt.Errorf("migrations: unknown dialect %q", dialect)
}
