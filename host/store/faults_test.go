package store_test

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agenthost/agenthost/host/store"
)

func TestIsStorageFull(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"a staging file's write", fmt.Errorf("blob: write staging file: %w", &fs.PathError{Op: "write", Path: "/d/tmp/put-1", Err: syscall.ENOSPC}), true},
		{"a quota", fmt.Errorf("x: %w", syscall.EDQUOT), true},
		{"PostgreSQL's disk_full", fmt.Errorf("store: insert: %w", &pgconn.PgError{Code: "53100", Message: "could not extend file"}), true},
		{"another PostgreSQL error", &pgconn.PgError{Code: "23505"}, false},
		{"permission denied", &fs.PathError{Op: "open", Path: "/d", Err: syscall.EACCES}, false},
		{"any other", errors.New("database or disk is full"), false}, // text alone proves nothing
	} {
		if got := store.IsStorageFull(c.err); got != c.want {
			t.Errorf("%s: IsStorageFull = %v, want %v", c.name, got, c.want)
		}
	}
}
