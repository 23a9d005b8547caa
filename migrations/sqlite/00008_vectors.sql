-- +goose Up
-- Chunk embeddings, when an embedding model is configured: float32 values,
-- little-endian, of the model's dimension. Search over them is exact (cosine)
-- on both databases; an approximate index (pgvector HNSW) can sit beside it
-- where the extension exists.
CREATE TABLE chunk_vectors (
    chunk_id  TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    tenant_id TEXT NOT NULL,
    sha256    TEXT NOT NULL,
    model     TEXT NOT NULL,
    dim       INTEGER NOT NULL,
    vec       BLOB NOT NULL
) STRICT;
CREATE INDEX chunk_vectors_content ON chunk_vectors (tenant_id, sha256);
