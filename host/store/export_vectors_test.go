package store

// IndexedSearches counts the vector searches the HNSW index answered (0 on
// stores without pgvector).
func IndexedSearches(db *DB) int64 {
	if db.vectors == nil {
		return 0
	}
	return db.vectors.indexed.Load()
}
