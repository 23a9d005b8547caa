package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/store"
)

// A backup is a folder: agenthost.db (a consistent snapshot of the embedded
// database), blobs/ (the content-addressed blobs, laid out as in the data
// directory), plugins/ (plugins installed through the API) and backup.json.
const (
	backupManifest = "backup.json"
	dbFile         = "agenthost.db"
	// holdTTL bounds how long a killed backup stops sweeps; a live one
	// renews its hold every holdTTL/4.
	holdTTL = 10 * time.Minute
)

// backupInfo is backup.json.
type backupInfo struct {
	CreatedAt time.Time `json:"createdAt"`
	Schema    int64     `json:"schema"`
	Blobs     int       `json:"blobs"`
	Bytes     int64     `json:"bytes"`
}

// backupCmd copies the embedded database and its blobs while serve runs:
//
//	agenthost backup -data DIR -to PATH
//
// Consistency: a storage hold is taken first (the sweeper deletes nothing
// while it is in force), then SQLite's VACUUM INTO writes a snapshot of one
// read transaction, then the blobs are copied. Blobs are immutable and named
// by their content, so a blob copied after the snapshot is the blob the
// snapshot refers to; blobs stored after it are copied or not, harmlessly;
// and the hold makes sure none the snapshot refers to is deleted before it
// is copied. Every blob row of the snapshot is checked to be in the backup.
// A PATH holding an earlier backup is updated: only blobs it lacks are copied.
func backupCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("backup", flag.ContinueOnError)
	fl.SetOutput(stderr)
	sf := addStorageFlags(fl)
	to := fl.String("to", "", "folder to write the backup to (new, empty, or an earlier backup to update)")
	fl.String("config", "", settingUsage("config", "with an objectStorage section the blobs are in a bucket, and only the database is copied"))
	if ok, err := parseArgs(fl, args); !ok {
		return err
	}
	file, err := checkSettings("backup", fl)
	if err != nil {
		return err
	}
	if *sf.url != "" {
		return errors.New("backup: -database is PostgreSQL: back it up with pg_dump (docs/storage.md#backups); this command copies the embedded database")
	}
	if *to == "" {
		return errors.New("backup: -to PATH is required")
	}
	objectStorage, err := file.ObjectStorageConfig(os.Getenv)
	if err != nil {
		return err
	}
	data := *sf.data
	if _, err := os.Stat(filepath.Join(data, dbFile)); err != nil {
		return fmt.Errorf("backup: no embedded database in %s: %w", data, err)
	}
	if err := prepareBackupDir(*to); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := store.Open(ctx, store.Config{Dir: data, Logger: logger})
	if err != nil {
		return err
	}
	defer db.Close()
	// A backup never changes the schema under a running server.
	if pending, err := db.Pending(ctx); err != nil {
		return err
	} else if pending {
		return fmt.Errorf("backup: the database in %s has migrations this agenthost would apply: back it up with the agenthost that serves it, or run serve (or migrate) of this version first", data)
	}
	hold, err := db.Hold(ctx, "backup to "+*to, holdTTL)
	if err != nil {
		return err
	}
	defer db.Release(context.WithoutCancel(ctx), hold)
	renewCtx, stopRenew := context.WithCancel(ctx)
	defer stopRenew()
	go func() {
		for {
			select {
			case <-renewCtx.Done():
				return
			case <-time.After(holdTTL / 4):
				if err := db.RenewHold(renewCtx, hold, holdTTL); err != nil && renewCtx.Err() == nil {
					logger.Warn("renewing the backup's storage hold", "err", err)
				}
			}
		}
	}()

	snap := filepath.Join(*to, dbFile)
	tmp := snap + ".partial"
	os.Remove(tmp)
	if _, err := db.SQL().ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		return fmt.Errorf("backup: snapshot of the database: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	schema, err := db.MigrateTo(ctx, 0)
	if err != nil {
		return err
	}
	n, size := 0, int64(0)
	if objectStorage == nil {
		src, err := blob.NewDir(filepath.Join(data, "blobs"))
		if err != nil {
			return err
		}
		dst := filepath.Join(*to, "blobs")
		if n, size, err = copyBlobs(ctx, src, dst, false); err != nil {
			return err
		}
		if err := checkSnapshotBlobs(ctx, tmp, dst); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stdout, "blobs are in object storage: back the bucket up with the provider's tools (versioning, replication); the sweeper deletes no object, so the bucket holds every blob this snapshot refers to")
	}
	if err := copyTree(filepath.Join(data, "plugins"), filepath.Join(*to, "plugins")); err != nil {
		return err
	}
	if err := os.Rename(tmp, snap); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	info := backupInfo{CreatedAt: time.Now().UTC(), Schema: schema, Blobs: n, Bytes: size}
	raw, _ := json.MarshalIndent(info, "", "  ")
	if err := os.WriteFile(filepath.Join(*to, backupManifest), append(raw, '\n'), 0o600); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(stdout, "backup of %s written to %s: database at schema %d, %d blobs (%s)\n", data, *to, schema, n, bytesText(size))
	return nil
}

// prepareBackupDir makes the backup folder, refusing one that holds
// something other than an earlier backup.
func prepareBackupDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, backupManifest)); err != nil {
		return fmt.Errorf("backup: %s is not empty and holds no earlier backup (%s): choose another folder", dir, backupManifest)
	}
	return nil
}

// copyBlobs copies every blob of src missing from the folder dst (same
// layout). With verify, each copied blob is hashed and refused if its bytes
// do not match its name. It returns the number and size of src's blobs.
func copyBlobs(ctx context.Context, src *blob.Dir, dst string, verify bool) (int, int64, error) {
	n, total := 0, int64(0)
	err := src.Walk(ctx, func(b blob.Stored) error {
		from, _ := src.Path(b.SHA256)
		to := filepath.Join(dst, b.SHA256[:2], b.SHA256[2:])
		n++
		total += b.Size
		if st, err := os.Stat(to); err == nil && st.Size() == b.Size {
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o750); err != nil {
			return err
		}
		sum, err := copyFile(from, to)
		if errors.Is(err, fs.ErrNotExist) {
			n--
			total -= b.Size
			return nil // deleted since the walk saw it: no snapshot refers to it (the hold)
		}
		if err != nil {
			return err
		}
		if verify && sum != b.SHA256 {
			os.Remove(to)
			return fmt.Errorf("blob %s: its bytes hash to %s: the copy is damaged", b.SHA256, sum)
		}
		return nil
	})
	return n, total, err
}

// copyFile copies a file through a temporary name (renamed into place once
// synced) and returns the hex SHA-256 of what it copied.
func copyFile(from, to string) (string, error) {
	in, err := os.Open(from)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(to), ".partial-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(out.Name())
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(out, h), in); err != nil {
		out.Close()
		return "", fmt.Errorf("copy %s: %w", from, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return "", err
	}
	if err := out.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(out.Name(), to); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// copyTree copies the regular files under from (if it exists) to to.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == from {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o750)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		_, err = copyFile(p, target)
		return err
	})
}

// checkSnapshotBlobs makes sure every blob row of the database snapshot has
// its bytes in the folder blobs.
func checkSnapshotBlobs(ctx context.Context, snapshot, blobs string) error {
	db, err := sql.Open("sqlite", "file:"+snapshot+"?mode=ro")
	if err != nil {
		return fmt.Errorf("backup: open snapshot: %w", err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT sha256, size FROM blobs`)
	if err != nil {
		return fmt.Errorf("backup: read snapshot: %w", err)
	}
	defer rows.Close()
	var missing []string
	for rows.Next() {
		var sha string
		var size int64
		if err := rows.Scan(&sha, &size); err != nil {
			return err
		}
		if len(sha) != 64 {
			continue
		}
		if st, err := os.Stat(filepath.Join(blobs, sha[:2], sha[2:])); err != nil || st.Size() != size {
			missing = append(missing, sha)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("backup: %d blobs the database refers to are missing from the data directory (first: %s); the backup is incomplete", len(missing), missing[0])
	}
	return nil
}

// restoreCmd brings a backup back into a data directory:
//
//	agenthost restore -from PATH -data DIR [-force]
//
// It refuses a data directory that is not empty unless -force, which
// replaces its database, blobs and installed plugins. Every blob is hashed
// as it is copied; a damaged one stops the restore.
func restoreCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("restore", flag.ContinueOnError)
	fl.SetOutput(stderr)
	from := fl.String("from", "", "backup folder written by agenthost backup")
	data := fl.String("data", "data", settingUsage("data", "here the one to restore into"))
	force := fl.Bool("force", false, "replace the database, blobs and installed plugins of a data directory that is not empty (stop serve first)")
	if ok, err := parseArgs(fl, args); !ok {
		return err
	}
	if _, err := checkSettings("restore", fl); err != nil {
		return err
	}
	if *from == "" {
		return errors.New("restore: -from PATH is required")
	}
	raw, err := os.ReadFile(filepath.Join(*from, backupManifest))
	if err != nil {
		return fmt.Errorf("restore: %s is not a complete backup: %w", *from, err)
	}
	var info backupInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return fmt.Errorf("restore: %s: %w", backupManifest, err)
	}
	if _, err := os.Stat(filepath.Join(*from, dbFile)); err != nil {
		return fmt.Errorf("restore: %s is not a complete backup: %w", *from, err)
	}
	entries, err := os.ReadDir(*data)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("restore: %w", err)
	case len(entries) > 0 && !*force:
		return fmt.Errorf("restore: %s is not empty: restore into an empty folder, or pass -force to replace its database, blobs and plugins", *data)
	case len(entries) > 0:
		for _, name := range []string{dbFile, dbFile + "-wal", dbFile + "-shm", "blobs", "plugins"} {
			if err := os.RemoveAll(filepath.Join(*data, name)); err != nil {
				return fmt.Errorf("restore: %w", err)
			}
		}
	}
	if err := os.MkdirAll(*data, 0o700); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	n, size := 0, int64(0)
	// A backup of an installation with its blobs in object storage has none.
	if _, err := os.Stat(filepath.Join(*from, "blobs")); err == nil {
		src, err := blob.NewDir(filepath.Join(*from, "blobs"))
		if err != nil {
			return err
		}
		if n, size, err = copyBlobs(ctx, src, filepath.Join(*data, "blobs"), true); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
	}
	if err := copyTree(filepath.Join(*from, "plugins"), filepath.Join(*data, "plugins")); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	// The database last: a data directory with a database is one serve
	// takes for complete.
	if _, err := copyFile(filepath.Join(*from, dbFile), filepath.Join(*data, dbFile)); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	fmt.Fprintf(stdout, "restored the backup of %s into %s: schema %d, %d blobs (%s)\n",
		info.CreatedAt.Format(time.RFC3339), *data, info.Schema, n, bytesText(size))
	return nil
}
