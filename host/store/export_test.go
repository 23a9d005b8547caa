package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/agenthost/agenthost/host/tenancy"
)

// SeedFilesForBenchmark inserts n file rows (over n small blob rows) into a
// workspace in bulk: every tenth tagged q4, MIME types mixed. The listing
// benchmark measures reads, so it fills the table without the upload path.
func SeedFilesForBenchmark(ctx context.Context, db *DB, p tenancy.Principal, ws string, n int) error {
	mimes := []string{"application/pdf", "text/plain", "image/png", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}
	const batch = 500
	err := db.tx(ctx, func(c conn) error {
		t := micros(now())
		for start := 0; start < n; start += batch {
			var blobArgs, fileArgs, tagArgs []any
			var tagRows int
			end := min(start+batch, n)
			for i := start; i < end; i++ {
				h := sha256.Sum256(fmt.Appendf(nil, "%d", i))
				sha := hex.EncodeToString(h[:])
				id := newID()
				blobArgs = append(blobArgs, sha, 10, t)
				fileArgs = append(fileArgs, id, p.TenantID, ws, p.UserID, fmt.Sprintf("doc-%06d", i), mimes[i%len(mimes)], sha, 10, "", "active", false, t+int64(i), t+int64(i))
				if i%10 == 0 {
					tagArgs = append(tagArgs, id, "q4")
					tagRows++
				}
			}
			rows := end - start
			if _, err := c.exec(ctx, `INSERT INTO blobs (sha256, size, created_at) VALUES `+repeatRow(3, rows), blobArgs...); err != nil {
				return err
			}
			if _, err := c.exec(ctx, `INSERT INTO files (id, tenant_id, workspace_id, created_by, name, mime_type, sha256, size,
				description, status, shared, created_at, updated_at) VALUES `+repeatRow(13, rows), fileArgs...); err != nil {
				return err
			}
			if tagRows > 0 {
				if _, err := c.exec(ctx, `INSERT INTO file_tags (file_id, tag) VALUES `+repeatRow(2, tagRows), tagArgs...); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// A bulk load leaves the planner without statistics until autovacuum
	// comes by; a running system has them, so the benchmark does too.
	_, err = db.sql.ExecContext(ctx, "ANALYZE")
	return err
}

func repeatRow(cols, rows int) string {
	row := "(" + placeholders(cols) + ")"
	s := row
	for range rows - 1 {
		s += ", " + row
	}
	return s
}
