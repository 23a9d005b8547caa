package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agenthost/agenthost/host/store"
)

// TestDataDirectoryWithURICharacters: a data directory whose name holds
// '#', '?' or '%' keeps its database inside it (the SQLite URI filename
// once ended at the '#', and every such directory shared one file).
func TestDataDirectoryWithURICharacters(t *testing.T) {
	for _, name := range []string{"run#1", "what?", "100%"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			db, err := store.Open(context.Background(), store.Config{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, "agenthost.db")); err != nil {
				t.Fatalf("the database is not in its directory: %v", err)
			}
		})
	}
}
