package jobs

import (
	"context"
	"fmt"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/agenthost/agenthost/host/store"
)

// Migrate applies River's own schema migrations (river_job, river_leader, …)
// for the database's dialect. It is idempotent: migrations already applied
// are skipped, so every process may call it on start-up; each migration runs
// in its own transaction. agenthost's own tables, job_progress included, are
// migrated by store.DB.Migrate.
func Migrate(ctx context.Context, db *store.DB) error {
	var err error
	switch db.Dialect() {
	case store.Postgres:
		err = migrate(ctx, riverpgxv5.New(db.Pool()))
	case store.SQLite:
		err = migrate(ctx, riversqlite.New(db.SQL()))
	default:
		err = fmt.Errorf("unknown dialect %q", db.Dialect())
	}
	if err != nil {
		return fmt.Errorf("jobs: migrate: %w", err)
	}
	return nil
}

func migrate[TTx any](ctx context.Context, driver riverdriver.Driver[TTx]) error {
	m, err := rivermigrate.New(driver, nil)
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}
