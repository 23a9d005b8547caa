package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/store"
)

// storageFlags are the flags every command that opens the database shares.
type storageFlags struct {
	data, url *string
	wait      *time.Duration
}

func addStorageFlags(fs *flag.FlagSet) storageFlags {
	return storageFlags{
		data: fs.String("data", envOr("AGENTHOST_DATA", "data"), "data directory (embedded database, blobs, compile cache)"),
		url:  fs.String("database", envOr("AGENTHOST_DATABASE_URL", ""), "PostgreSQL URL (postgres://…); empty uses the embedded database in -data"),
		wait: fs.Duration("database-wait", envDuration("AGENTHOST_DATABASE_WAIT", 30*time.Second), "how long to keep retrying a PostgreSQL server that does not answer at start-up (0: fail at once)"),
	}
}

func (s storageFlags) open(ctx context.Context, logger *slog.Logger) (*store.DB, error) {
	return store.Open(ctx, store.Config{URL: *s.url, Dir: *s.data, Logger: logger, ConnectWait: *s.wait})
}

// blobs returns the blob backend: the bucket s3 names when object storage
// is configured (loadObjectStorage), else the one that goes with the
// database: a directory beside the embedded database, or the database
// itself for PostgreSQL, so every host of a cluster reads the same bytes.
// Uploads to S3 and PostgreSQL are staged in DATA/staging.
func (s storageFlags) blobs(ctx context.Context, db *store.DB, s3 *blob.S3Config, logger *slog.Logger) (files.Blobs, error) {
	staging := filepath.Join(*s.data, "staging")
	if s3 != nil {
		cfg := *s3
		cfg.StagingDir = staging
		b, err := blob.NewS3(ctx, cfg)
		if err != nil {
			return nil, err
		}
		logger.Info("blobs in object storage", "s3", cfg)
		if where := s.databaseBlobsLeft(ctx, db); where != "" {
			logger.Warn("blobs remain in the database's store: files stored before the move read as not found until `agenthost blobs copy` has copied them; remove them after", "where", where)
		}
		return b, nil
	}
	if db.Dialect() == store.Postgres {
		return blob.NewPostgres(db.Pool(), blob.WithStagingDir(staging)), nil
	}
	return blob.NewDir(filepath.Join(*s.data, "blobs"))
}

// databaseBlobsLeft says where the database's own blob store still holds
// blobs ("" when it holds none, or cannot tell): what an installation that
// moved to object storage has not copied, or not removed yet.
func (s storageFlags) databaseBlobsLeft(ctx context.Context, db *store.DB) string {
	if db.Dialect() == store.Postgres {
		var any bool
		if err := db.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM blobs)`).Scan(&any); err != nil || !any {
			return ""
		}
		return "PostgreSQL table blobs"
	}
	dir := filepath.Join(*s.data, "blobs")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if e.IsDir() && len(e.Name()) == 2 {
			return dir
		}
	}
	return ""
}

// migrateAll applies agenthost's schema and the job queue's.
func migrateAll(ctx context.Context, db *store.DB) error {
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	return jobs.Migrate(ctx, db)
}

// migrateCmd applies the database migrations (forward-only).
func migrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sf := addStorageFlags(fs)
	if ok, err := parseArgs(fs, args); !ok {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	db, err := sf.open(ctx, logger)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := migrateAll(ctx, db); err != nil {
		return err
	}
	v, err := db.MigrateTo(ctx, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s database at schema version %d\n", db.Dialect(), v)
	return nil
}

// prepareSchema migrates the embedded database, and PostgreSQL when asked;
// a PostgreSQL database with pending migrations is refused with the command
// that applies them, because several hosts may share it and an operator
// decides when its schema changes.
func prepareSchema(ctx context.Context, db *store.DB, migratePostgres bool) error {
	if db.Dialect() == store.SQLite || migratePostgres {
		return migrateAll(ctx, db)
	}
	pending, err := db.Pending(ctx)
	if err != nil {
		return err
	}
	if pending {
		return fmt.Errorf("the PostgreSQL database has pending migrations: run `agenthost migrate -database URL` (or serve -migrate)")
	}
	return nil
}
