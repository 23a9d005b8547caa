package search

import (
	"context"
	"errors"
	"log/slog"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Store is what searching needs of the database.
type Store interface {
	SearchLexical(ctx context.Context, p tenancy.Principal, q kindex.Query) ([]kindex.Hit, error)
	SearchVectors(ctx context.Context, p tenancy.Principal, q kindex.Query, model string, vec []float32) ([]kindex.Hit, error)
}

// languageStore is the optional part of a Store that knows the
// languages a workspace searches in.
type languageStore interface {
	WorkspaceLanguages(ctx context.Context, p tenancy.Principal, workspaceID string) ([]string, error)
}

// Embedder turns texts into vectors (the model layer's embedding operation).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, modeluse.Usage, error)
	Model(op modeluse.Operation) (llm.ModelInfo, bool)
}

// Values of Hit.Match.
const (
	MatchHybrid = "hybrid"
	MatchWords  = "words"
)

// Service is hybrid search: lexical always, vectors when an embedding model
// is configured, fused by rank. When the embedding call fails the search
// goes on lexically (degraded, logged), never fails for it.
type Service struct {
	store  Store
	embed  Embedder // nil: lexical only
	logger *slog.Logger
}

// New returns a searcher; embed nil searches lexically only.
func New(store Store, embed Embedder, logger *slog.Logger) *Service {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{store: store, embed: embed, logger: logger}
}

// Search runs the query for the principal.
func (s *Service) Search(ctx context.Context, p tenancy.Principal, q kindex.Query) ([]kindex.Hit, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	if ls, ok := s.store.(languageStore); ok && q.Languages == nil && q.WorkspaceID != "" {
		langs, err := ls.WorkspaceLanguages(ctx, p, q.WorkspaceID)
		if err != nil {
			return nil, err
		}
		q.Languages = langs
	}
	lexical, lerr := s.store.SearchLexical(ctx, p, q)
	if lerr != nil && !(errors.Is(lerr, tenancy.ErrInvalid) && len(kindex.Terms(q.Text)) == 0 && s.embed != nil) {
		return nil, lerr
	}
	model, ok := s.model()
	if !ok {
		return marked(lexical, MatchWords), nil
	}
	ctx = llm.WithAttribution(ctx, llm.Attribution{TenantID: p.TenantID, UserID: p.UserID, WorkspaceID: q.WorkspaceID, Purpose: "search"})
	vecs, _, err := s.embed.Embed(ctx, []string{q.Text})
	if err != nil || len(vecs) != 1 {
		s.logger.Warn("knowledge: query embedding failed; searching lexically", "err", err)
		return marked(lexical, MatchWords), nil
	}
	wide := q
	wide.Limit = min(100, 2*limit)
	vector, err := s.store.SearchVectors(ctx, p, wide, model, vecs[0])
	if err != nil {
		return nil, err
	}
	return marked(Fuse(limit, lexical, vector), MatchHybrid), nil
}

// marked sets every hit's Match, so that a caller sees when results were
// found by their words only.
func marked(hits []kindex.Hit, match string) []kindex.Hit {
	for i := range hits {
		hits[i].Match = match
	}
	return hits
}

func (s *Service) model() (string, bool) {
	if s.embed == nil {
		return "", false
	}
	m, ok := s.embed.Model(modeluse.OpEmbedding)
	return m.Name, ok
}
