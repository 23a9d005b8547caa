package store

import (
	"context"
	"fmt"
	"strings"
)

// SchemaDump describes the database's schema (tables, columns, indexes) as
// sorted text, excluding the migration bookkeeping. Two databases of one
// dialect with the same dump have the same schema; the migration tests
// compare a database migrated from empty with ones migrated step by step.
func (db *DB) SchemaDump(ctx context.Context) (string, error) {
	var q string
	switch db.dialect {
	case SQLite:
		q = `SELECT type || ' ' || name || ': ' || COALESCE(sql, '') FROM sqlite_master
			WHERE name NOT LIKE 'sqlite_%' AND name <> 'goose_db_version' ORDER BY type, name`
	case Postgres:
		q = `SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || COALESCE(column_default, '')
				FROM information_schema.columns WHERE table_schema = current_schema() AND table_name <> 'goose_db_version'
			UNION ALL
			SELECT 'index ' || indexname || ': ' || indexdef FROM pg_indexes
				WHERE schemaname = current_schema() AND tablename <> 'goose_db_version'
			UNION ALL
			SELECT 'constraint ' || conrelid::regclass::text || ' ' || conname || ': ' || pg_get_constraintdef(oid) FROM pg_constraint
				WHERE connamespace = current_schema()::regnamespace AND conrelid::regclass::text <> 'goose_db_version'
			ORDER BY 1`
	}
	rows, err := db.sql.QueryContext(ctx, q)
	if err != nil {
		return "", fmt.Errorf("store: schema: %w", err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String(), rows.Err()
}
