package store

import (
	"context"
	"strings"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
)

// IndexedSearches counts the vector searches the HNSW index answered (0 on
// stores without pgvector).
func IndexedSearches(db *DB) int64 {
	if db.vectors == nil {
		return 0
	}
	return db.vectors.indexed.Load()
}

// ExplainVectorSearch returns PostgreSQL's plan of the index search for the
// query, with the settings the search uses.
func ExplainVectorSearch(ctx context.Context, db *DB, p tenancy.Principal, qy kindex.Query, model string, vec []float32) (string, error) {
	where, args, err := chunkFilters(p, qy)
	if err != nil {
		return "", err
	}
	t, err := db.vectors.table(ctx, db, len(vec))
	if err != nil {
		return "", err
	}
	from, scopeArgs := hnswFrom(t, where, args, model)
	q, qArgs := hnswQuery(t, from, scopeArgs, vec, max(qy.Limit, 10))
	var plan []string
	err = db.tx(ctx, func(c conn) error {
		for _, s := range []string{"SET LOCAL hnsw.iterative_scan = relaxed_order", "SET LOCAL hnsw.ef_search = 40"} {
			if _, err := c.exec(ctx, s); err != nil {
				return err
			}
		}
		rows, err := c.query(ctx, "EXPLAIN "+q, qArgs...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return err
			}
			plan = append(plan, line)
		}
		return rows.Err()
	})
	return strings.Join(plan, "\n"), err
}
