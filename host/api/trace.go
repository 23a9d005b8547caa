package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/agenttrace"
	"github.com/agenthost/agenthost/host/workflows"
)

// handleTrace: GET /workflows/:id/trace, the agent trace of the
// workflow, reconstructed from its events and usage records.
func handleTrace(wf *workflows.Service, b Billing) fiber.Handler {
	const page = 1000
	return func(c *fiber.Ctx) error {
		ctx, p, id := c.UserContext(), principal(c), c.Params("id")
		if _, err := wf.Get(ctx, p, id); err != nil {
			return err
		}
		var events []workflows.Event
		for after := int64(0); ; {
			evs, err := wf.Events(ctx, p, id, after, page)
			if err != nil {
				return err
			}
			events = append(events, evs...)
			if len(evs) < page {
				break
			}
			after = evs[len(evs)-1].Seq
		}
		records, err := b.UsageRecords(ctx, p, id)
		if err != nil {
			return err
		}
		return c.JSON(agenttrace.Build(id, events, records))
	}
}
