package storetest

import (
	"context"
	"testing"
)

// testMigrations applies the schema from empty and from every earlier
// version, and checks each path ends at the same schema with data kept.
func testMigrations(t *testing.T, open Opener) {
	ctx := context.Background()
	ref := open(t)
	versions, err := ref.DB.Migrations()
	if err != nil || len(versions) == 0 {
		t.Fatalf("migrations: %v %v", versions, err)
	}
	latest := versions[len(versions)-1]
	if v, err := ref.DB.MigrateTo(ctx, 0); err != nil || v != latest {
		t.Fatalf("migrate from empty: version %d, %v", v, err)
	}
	want, err := ref.DB.SchemaDump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := ref.DB.MigrateTo(ctx, 0); err != nil || v != latest {
		t.Fatalf("migrating twice must be a no-op: version %d, %v", v, err)
	}
	for _, from := range versions[:len(versions)-1] {
		env := open(t)
		if v, err := env.DB.MigrateTo(ctx, from); err != nil || v != from {
			t.Fatalf("migrate to %d: got %d, %v", from, v, err)
		}
		// Version 1 makes tenants: a row written then must survive.
		tn, err := env.DB.CreateTenant(ctx, "kept")
		if err != nil {
			t.Fatalf("at version %d: %v", from, err)
		}
		if v, err := env.DB.MigrateTo(ctx, 0); err != nil || v != latest {
			t.Fatalf("migrate from %d: got %d, %v", from, v, err)
		}
		got, err := env.DB.SchemaDump(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("schema migrated from version %d differs from the one migrated from empty:\n%s\nvs\n%s", from, got, want)
		}
		var name string
		if err := env.DB.SQL().QueryRowContext(ctx, "SELECT name FROM tenants WHERE id = '"+tn.ID+"'").Scan(&name); err != nil || name != "kept" {
			t.Errorf("tenant written at version %d lost: %q %v", from, name, err)
		}
	}
}
