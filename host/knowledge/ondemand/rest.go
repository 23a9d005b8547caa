package ondemand

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm"
)

// RestBatch is how many pages of a large PDF one background step extracts.
// A reader asking for another page waits at most for one batch: on-demand
// reads take the same per-content lock between batches, so they go first.
const RestBatch = 25

// ExtractRest extracts, in the background, the pages of an on-demand PDF
// that nobody has read yet, RestBatch at a time, until the whole document
// is in the knowledge store (issue 11 item 8: a long PDF becomes fully
// searchable without anyone reading it). Pages already extracted (read on
// demand, or by an earlier run of this that was stopped) are skipped, so
// it resumes where it stopped and stores no page twice. progress is told
// how many pages are extracted of how many after each batch. It returns
// the number of pages it extracted; a content that is not on demand (or
// failed) has none to extract, one not indexed yet is ErrNotReady.
func (r *Reader) ExtractRest(ctx context.Context, f filemeta.Item, progress func(done, total int)) (int, error) {
	ctx = wasm.WithTenant(ctx, f.TenantID)
	ctx = llm.WithAttribution(ctx, llm.Attribution{TenantID: f.TenantID, WorkspaceID: f.WorkspaceID, UserID: f.CreatedBy, Purpose: "extraction"})
	c := Content{File: f, Name: f.Name, MIMEType: f.MIMEType, SHA256: f.SHA256, Size: f.Size}
	extracted := 0
	for {
		if err := ctx.Err(); err != nil {
			return extracted, err
		}
		st, err := r.store.ContentStateOf(ctx, f.TenantID, f.SHA256)
		if errors.Is(err, tenancy.ErrNotFound) {
			return extracted, fmt.Errorf("%w: %s is not indexed yet", ErrNotReady, f.Name)
		}
		if err != nil {
			return extracted, err
		}
		switch st.Status {
		case kindex.StatusFailed:
			return extracted, nil // nothing to complete
		case kindex.StatusIndexed, kindex.StatusEmbedding:
		default:
			return extracted, fmt.Errorf("%w: %s is being indexed (%s)", ErrNotReady, f.Name, st.Status)
		}
		if !Is(st.Index) {
			return extracted, nil
		}
		total := PageCount(st.Index)
		done := kindex.ExtractedPages(st.Index)
		var next []int
		for pg := 1; pg <= total && len(next) < RestBatch; pg++ {
			if _, ok := slices.BinarySearch(done, pg); !ok {
				next = append(next, pg)
			}
		}
		if progress != nil {
			progress(len(done), total)
		}
		if len(next) == 0 {
			return extracted, nil
		}
		got, err := r.ensurePages(ctx, c, next)
		if err != nil {
			return extracted, fmt.Errorf("knowledge: completing %s in the background: %w", f.Name, err)
		}
		extracted += len(got)
	}
}
