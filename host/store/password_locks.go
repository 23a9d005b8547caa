package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
)

// A tenant's content is indexed once for every file with its bytes. One
// read with a password (content_indexes.password_read) would so be
// readable through any file with the same bytes, by people who never gave
// the password: it stays locked for each file until a password that opens
// it is given for that file (files.password_given). A locked file shows
// its content as waiting for its password, and its text is not found by
// search nor read (docs/knowledge.md#passwords).

// passwordOpen is the SQL condition that the content of file alias may be
// read through it: not read with a password, or one given for this file.
func passwordOpen(alias string) string {
	return "(" + alias + ".password_given OR NOT EXISTS (SELECT 1 FROM content_indexes pw WHERE pw.tenant_id = " + alias +
		".tenant_id AND pw.sha256 = " + alias + ".sha256 AND pw.password_read))"
}

// lockedState is the reason a locked file called name shows for its
// content's status and reason: a unlock.StatusEncrypted one (by its
// prefix), or a failure for another reason as it is.
func lockedState(status kindex.Status, reason, name string) string {
	const give = " needs its password (give it with POST /api/v1/files/{id}/password)"
	switch {
	case status != kindex.StatusFailed:
		return kindex.ReasonEncrypted + name + give + ": its text was read with a password given for another file with the same bytes"
	case strings.HasPrefix(reason, kindex.ReasonWrongPassword):
		return kindex.ReasonWrongPassword + "the password given does not open " + name + "; nothing was lost, give the right one"
	case strings.HasPrefix(reason, kindex.ReasonEncrypted):
		return kindex.ReasonEncrypted + name + give
	}
	return reason
}

// PasswordLocked reports whether a file's content was read with a password
// and none was given for this file (administrative: the caller checked
// access, as for FileForIndexing).
func (db *DB) PasswordLocked(ctx context.Context, fileID string) (bool, error) {
	var open bool
	err := db.conn().queryRow(ctx, `SELECT `+passwordOpen("f")+` FROM files f WHERE f.id = ?`, fileID).Scan(&open)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("%w: no file %q", tenancy.ErrNotFound, fileID)
	}
	if err != nil {
		return false, fmt.Errorf("store: password lock: %w", err)
	}
	return !open, nil
}

// GivePassword records that a password which opens a file's content was
// given for the file, which unlocks it, and reports whether it did: only a
// content that was read (not failed) is unlocked; a password never
// unlocks one that waits for it.
func (db *DB) GivePassword(ctx context.Context, fileID string) (bool, error) {
	res, err := db.conn().exec(ctx, `UPDATE files SET password_given = ? WHERE id = ? AND EXISTS (SELECT 1 FROM content_indexes ci
		WHERE ci.tenant_id = files.tenant_id AND ci.sha256 = files.sha256 AND ci.status <> 'failed')`, true, fileID)
	if err != nil {
		return false, fmt.Errorf("store: password given: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
