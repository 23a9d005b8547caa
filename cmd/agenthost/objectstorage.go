package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/agenthost/agenthost/host/blob"
)

// blobsCmd is `agenthost blobs copy`: it copies every blob of the
// database's store (DATA/blobs beside the embedded database, or
// PostgreSQL's) into the configured object storage, so that an
// installation can move to it without losing its files. It is idempotent
// and resumable; serve and worker may run meanwhile (blobs they store after
// the copy started are copied by the next run).
func blobsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "copy" {
		fmt.Fprintln(stderr, "usage: agenthost blobs copy [-data DIR] [-database URL] [-config FILE]")
		if len(args) == 0 || args[0] == "-h" || args[0] == "help" {
			return nil
		}
		return fmt.Errorf("blobs: unknown subcommand %q", args[0])
	}
	fs := flag.NewFlagSet("blobs copy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sf := addStorageFlags(fs)
	fs.String("config", "", settingUsage("config", "its objectStorage section says where the blobs go; AGENTHOST_S3_* override it"))
	if ok, err := parseArgs(fs, args[1:]); !ok {
		return err
	}
	file, err := checkSettings("blobs", fs)
	if err != nil {
		return err
	}
	s3, err := file.ObjectStorageConfig(os.Getenv)
	if err != nil {
		return err
	}
	if s3 == nil {
		return errors.New("blobs copy: no object storage configured: give -config with an objectStorage section, or AGENTHOST_S3_* variables")
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	db, err := sf.open(ctx, logger)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := prepareSchema(ctx, db, false); err != nil {
		return err
	}
	from, err := sf.blobs(ctx, db, nil, logger)
	if err != nil {
		return err
	}
	to, err := sf.blobs(ctx, db, s3, logger)
	if err != nil {
		return err
	}
	src, ok := from.(blob.Source)
	if !ok {
		return fmt.Errorf("blobs copy: the %s blob store cannot list its blobs", db.Dialect())
	}
	dst, ok := to.(blob.Destination)
	if !ok {
		return errors.New("blobs copy: the object storage cannot take blobs")
	}
	seen := 0
	res, err := blob.Copy(ctx, dst, src, func(string, bool) {
		if seen++; seen%1000 == 0 {
			logger.Info("copying blobs", "done", seen)
		}
	})
	fmt.Fprintf(stdout, "copied %d blobs (%d bytes) to %s, %d were there already\n", res.Copied, res.Bytes, s3.String(), res.Present)
	if err != nil {
		return fmt.Errorf("blobs copy stopped (run it again to resume): %w", err)
	}
	return nil
}
