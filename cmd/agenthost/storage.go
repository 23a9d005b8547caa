package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"text/tabwriter"
	"time"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/server"
	"github.com/agenthost/agenthost/host/sweep"
)

// sweepFlags are the settings of the storage sweeper (host/sweep), taken by
// serve, worker and admin storage alike: every process that works the job
// queue may run the periodic sweep, so all should be given the same values.
type sweepFlags struct {
	versions, trash, grace, every *time.Duration
	// audit is how long the audit log keeps its entries (host/audit).
	audit *time.Duration
}

func addSweepFlags(fs *flag.FlagSet) sweepFlags {
	return sweepFlags{
		versions: fs.Duration("version-retention", sweep.DefaultVersionRetention, settingUsage("version-retention")),
		trash:    fs.Duration("trash-retention", sweep.DefaultTrashRetention, settingUsage("trash-retention")),
		grace:    fs.Duration("sweep-grace", sweep.DefaultGrace, settingUsage("sweep-grace")),
		every:    fs.Duration("sweep-every", sweep.DefaultEvery, settingUsage("sweep-every")),
		audit:    fs.Duration("audit-retention", audit.DefaultRetention, settingUsage("audit-retention")),
	}
}

// config is the sweeper's settings.
func (f sweepFlags) config() server.Sweep {
	return server.Sweep{Versions: *f.versions, Trash: *f.trash, Grace: *f.grace, Every: *f.every, Audit: *f.audit}
}

// adminStorageCmd reports what storage holds and what can be reclaimed, and
// with -sweep reclaims it now.
//
//	agenthost admin storage [-sweep] [-version-retention D] [-trash-retention D] [-sweep-grace D]
func adminStorageCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("admin storage", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sf := addStorageFlags(fs)
	sw := addSweepFlags(fs)
	now := fs.Bool("sweep", false, "reclaim now what nothing refers to (as the periodic sweep does), then report")
	fs.String("config", "", settingUsage("config", "its objectStorage section says where blobs are"))
	if ok, err := parseArgs(fs, args); !ok {
		return err
	}
	file, err := checkSettings("storage", fs)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := sf.open(ctx, logger)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := prepareSchema(ctx, db, false); err != nil {
		return err
	}
	objectStorage, err := file.ObjectStorageConfig(os.Getenv)
	if err != nil {
		return err
	}
	blobs, err := sf.blobs(ctx, db, objectStorage, logger)
	if err != nil {
		return err
	}
	s := server.NewSweeper(db, blobs, sw.config(), logger)
	if *now {
		res, err := s.Sweep(ctx)
		if err != nil {
			return fmt.Errorf("admin storage: sweep: %w", err)
		}
		fmt.Fprintf(stdout, "reclaimed %d blobs, %s; deleted %d old versions, %d decided proposals, %d trash entries\n",
			res.Blobs, bytesText(res.Bytes), res.Purged.Versions, res.Purged.Proposals, res.Purged.Trash)
	}
	rep, err := s.Report(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "stored: %d blobs, %s\n", rep.Blobs, bytesText(rep.Bytes))
	fmt.Fprintf(stdout, "reclaimable by the next sweep: %d blobs nothing refers to, %s; %d versions and %d trash entries past their retention\n",
		rep.Unreferenced, bytesText(rep.UnreferencedBytes), rep.ExpiredVersions, rep.ExpiredTrash)
	for _, h := range rep.Holds {
		fmt.Fprintf(stdout, "held (no sweep until released): %s\n", h)
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TENANT\tNAME\tBLOBS\tBYTES\tFILES\tFILE BYTES\tTRASHED\tTRASH BYTES")
	for _, t := range rep.Tenants {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\t%d\t%s\n", t.TenantID, t.Name, t.Blobs, bytesText(t.Bytes), t.Files, bytesText(t.FileBytes), t.Trashed, bytesText(t.TrashBytes))
	}
	return tw.Flush()
}

// bytesText writes a byte count for people: 6.3 MB.
func bytesText(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
