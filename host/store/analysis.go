package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agenthost/agenthost/host/knowledge/analysis"
	"github.com/agenthost/agenthost/host/tenancy"
)

// analysisMigration is the migration that added the chunks' analysed
// terms (migrations/*/00049_chunk_analysis.sql).
const analysisMigration = 49

// reanalyseBatch is how many chunks one transaction of reanalyse updates.
const reanalyseBatch = 500

// reanalyse analyses every chunk whose terms come from an older analysis
// (or none: chunks indexed before 00049, whose exact terms are their text
// until then) with the current one, a batch per transaction, so that an
// upgrade re-indexes what was indexed before and loses nothing: a chunk is
// searchable by its old terms until its new ones replace them. It runs when
// the store migrates; a process stopped on the way goes on where it stopped.
func (db *DB) reanalyse(ctx context.Context) error {
	total := 0
	after := ""
	for {
		type row struct{ id, text, lang string }
		rows, err := queryAll(ctx, db.conn(), "reanalyse chunks", func(r interface{ Scan(...any) error }) (row, error) {
			var x row
			err := r.Scan(&x.id, &x.text, &x.lang)
			return x, err
		}, `SELECT id, text, lang FROM chunks WHERE analysis < ? AND id > ? ORDER BY id LIMIT ?`, analysis.Version, after, reanalyseBatch)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			break
		}
		err = db.tx(ctx, func(c conn) error {
			for _, r := range rows {
				f := db.analyzer.Document(r.text, r.lang)
				if _, err := c.exec(ctx, `UPDATE chunks SET lang = ?, terms_exact = ?, terms_stems = ?, terms_parts = ?, analysis = ? WHERE id = ?`,
					f.Lang, f.Exact, f.Stems, f.Parts, analysis.Version, r.id); err != nil {
					return fmt.Errorf("store: reanalyse chunk: %w", err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		total += len(rows)
		after = rows[len(rows)-1].id
	}
	if total > 0 {
		db.logger.Info("chunks analysed again for search", "chunks", total, "analysis", analysis.Version)
	}
	return nil
}

// matchSQLite is an FTS5 query for the terms: any term, each by any of its
// forms in any column (bm25's column weights rank exact forms over stems
// over compound parts).
func matchSQLite(terms []analysis.Term) string {
	var ors []string
	for _, t := range terms {
		forms := t.Forms()
		q := make([]string, len(forms))
		for i, f := range forms {
			q[i] = `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
		}
		if len(q) > 0 {
			ors = append(ors, strings.Join(q, " OR "))
		}
	}
	return strings.Join(ors, " OR ")
}

// matchPostgres is the same query as a tsquery over the weighted tsvector
// (A exact forms, B stems, C compound parts).
func matchPostgres(terms []analysis.Term) string {
	var ors []string
	for _, t := range terms {
		for _, f := range t.Forms() {
			ors = append(ors, "'"+strings.NewReplacer(`'`, `''`, `\`, `\\`).Replace(f)+"'")
		}
	}
	return strings.Join(ors, " | ")
}

// WorkspaceLanguages returns the languages a workspace searches in (empty:
// every analysed language). Any member (and the tenant's admin) may read
// them.
func (db *DB) WorkspaceLanguages(ctx context.Context, p tenancy.Principal, workspaceID string) ([]string, error) {
	if _, _, err := db.Levels(ctx, p, workspaceID); err != nil {
		return nil, err
	}
	var s string
	if err := db.conn().queryRow(ctx, `SELECT languages FROM workspaces WHERE id = ?`, workspaceID).Scan(&s); err != nil {
		return nil, fmt.Errorf("store: workspace languages: %w", err)
	}
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, ","), nil
}

// SetWorkspaceLanguages sets the languages a workspace searches in (ISO
// 639-1 codes such as de, fr, it; none: every analysed language). Like the
// workspace's other settings it takes a manager of the workspace or the
// tenant's admin.
func (db *DB) SetWorkspaceLanguages(ctx context.Context, p tenancy.Principal, workspaceID string, langs []string) error {
	var codes []string
	for _, l := range langs {
		if !analysis.Valid(l) {
			return fmt.Errorf("%w: language %q is not analysed (one of %s, ko, ja, zh, th)", tenancy.ErrInvalid, l, strings.Join(analysis.Stemmed(), ", "))
		}
		c := analysis.Canonical(l)
		if !slices.Contains(codes, c) {
			codes = append(codes, c)
		}
	}
	return db.tx(ctx, func(c conn) error {
		_, write, err := workspaceLevels(ctx, c, p, workspaceID)
		if err != nil {
			return err
		}
		if write != tenancy.Group && write != tenancy.All {
			return fmt.Errorf("%w: only a manager of the workspace or the tenant's admin changes its search languages", tenancy.ErrForbidden)
		}
		if _, err := c.exec(ctx, `UPDATE workspaces SET languages = ? WHERE id = ?`, strings.Join(codes, ","), workspaceID); err != nil {
			return fmt.Errorf("store: workspace languages: %w", err)
		}
		return nil
	})
}
