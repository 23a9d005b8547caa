package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/server"
	"github.com/agenthost/agenthost/host/store"
)

// storageFlags are the flags every command that opens the database shares.
type storageFlags struct {
	data, url *string
	wait      *time.Duration
}

func addStorageFlags(fs *flag.FlagSet) storageFlags {
	return storageFlags{
		data: fs.String("data", "data", settingUsage("data")),
		url:  fs.String("database", "", settingUsage("database", "empty: the embedded database in -data")),
		wait: fs.Duration("database-wait", 30*time.Second, settingUsage("database-wait")),
	}
}

func (s storageFlags) open(ctx context.Context, logger *slog.Logger) (*store.DB, error) {
	c := s.config()
	c.Logger = logger
	return store.Open(ctx, c)
}

// config is the database the flags name.
func (s storageFlags) config() store.Config {
	return store.Config{URL: *s.url, Dir: *s.data, ConnectWait: *s.wait}
}

// blobs returns the blob backend (server.OpenBlobs) of the flags' data
// directory.
func (s storageFlags) blobs(ctx context.Context, db *store.DB, s3 *blob.S3Config, logger *slog.Logger) (files.Blobs, error) {
	return server.OpenBlobs(ctx, db, *s.data, s3, logger)
}

func migrateAll(ctx context.Context, db *store.DB) error { return server.MigrateAll(ctx, db) }

// migrateCmd applies the database migrations (forward-only).
func migrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sf := addStorageFlags(fs)
	if ok, err := parseArgs(fs, args); !ok {
		return err
	}
	if _, err := checkSettings("migrate", fs); err != nil {
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

// prepareSchema is server.PrepareSchema.
func prepareSchema(ctx context.Context, db *store.DB, migratePostgres bool) error {
	return server.PrepareSchema(ctx, db, migratePostgres)
}
