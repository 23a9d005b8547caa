package api

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm"
)

// PagePDFs copies a PDF's page as a PDF of its own, in the extractor's
// sandbox (extract.Set).
type PagePDFs interface {
	PagePDF(ctx context.Context, name, mimeType string, in wasm.Input, page int) (extract.PagePDF, error)
}

// pageCountHeader carries the document's page count beside a page's copy,
// which has one page: the viewer's navigation needs the count.
const pageCountHeader = "Agenthost-Page-Count"

// handlePagePDF: GET /files/:id/pages/:page/pdf, page n of a PDF as a
// one-page PDF (docs/ui.md#the-cited-page), what the preview draws a cited
// page from first. Access is the file's. The copy of a page of stored
// content never changes: its ETag is the content's hash and the page, so a
// viewer that asks again revalidates without the page being copied again.
// A PDF the extractor cannot copy page by page (encrypted) is 422: the
// viewer reads the file by ranges from the content route instead.
func handlePagePDF(svc *files.Service, s PagePDFs) fiber.Handler {
	return func(c *fiber.Ctx) error {
		page, err := strconv.Atoi(c.Params("page"))
		if err != nil || page < 1 {
			return fmt.Errorf("%w: page %q: a number from 1", tenancy.ErrInvalid, c.Params("page"))
		}
		// The file's record first: a revalidation or a refusal costs no
		// open of the content (a HEAD on an S3 store).
		f, err := svc.Get(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		if f.MIMEType != "application/pdf" {
			return fiber.NewError(fiber.StatusUnprocessableEntity, fmt.Sprintf("%s is %s, not a PDF", f.Name, f.MIMEType))
		}
		etagOf := func(sha string) string { return `"` + sha + "-p" + strconv.Itoa(page) + `"` }
		c.Set(fiber.HeaderCacheControl, "private, no-cache")
		if c.Get(fiber.HeaderIfNoneMatch) == etagOf(f.SHA256) {
			c.Set(fiber.HeaderETag, etagOf(f.SHA256))
			return c.SendStatus(fiber.StatusNotModified)
		}
		f, r, err := svc.Open(c.UserContext(), principal(c), f.ID)
		if err != nil {
			return err
		}
		defer r.Close()
		// The copy runs in the viewer's tenant's instances and is billed
		// to the viewer, as every extractor run is.
		who := principal(c)
		ctx := wasm.WithTenant(c.UserContext(), who.TenantID)
		ctx = llm.WithAttribution(ctx, llm.Attribution{TenantID: who.TenantID, WorkspaceID: f.WorkspaceID, UserID: who.UserID})
		pp, err := s.PagePDF(ctx, f.Name, f.MIMEType, r, page)
		if errors.Is(err, extract.ErrNoPagePDF) {
			return fiber.NewError(fiber.StatusUnprocessableEntity, err.Error())
		}
		if err != nil {
			return err
		}
		setStoredContentHeaders(c, "application/pdf", "")
		c.Set(fiber.HeaderETag, etagOf(f.SHA256)) // the version copied, should it have changed since
		c.Set(pageCountHeader, strconv.Itoa(pp.Pages))
		return c.Send(pp.Data)
	}
}
