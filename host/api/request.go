package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/tenancy"
)

// decodeJSON decodes a JSON body strictly: unknown fields and trailing data
// are errors that name what was wrong.
func decodeJSON(c *fiber.Ctx, v any) error {
	dec := json.NewDecoder(bytes.NewReader(c.Body()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: malformed JSON body: %v", tenancy.ErrInvalid, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: malformed JSON body: data after the JSON value", tenancy.ErrInvalid)
	}
	return nil
}

func urlPathEscape(s string) string { return url.PathEscape(s) }
