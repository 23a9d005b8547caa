package workflows

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/tenancy"
)

// maxFeedbackNote bounds a feedback note (a sentence or a paragraph).
const maxFeedbackNote = 4000

// SetFeedback keeps the person's verdict on an answer of the workflow
// (RatingHelpful or RatingUnhelpful, with an optional note; an empty
// rating withdraws it) with the message, for later evaluation, and appends
// a `messageFeedback` event. Only answers take feedback; only the owner
// gives it.
func (s *Service) SetFeedback(ctx context.Context, p tenancy.Principal, workflowID, messageID string, f Feedback) (Message, error) {
	f.Note = strings.TrimSpace(f.Note)
	switch {
	case f.Rating != RatingHelpful && f.Rating != RatingUnhelpful && f.Rating != "":
		return Message{}, fmt.Errorf("%w: rating %q (want %s, %s or empty)", tenancy.ErrInvalid, f.Rating, RatingHelpful, RatingUnhelpful)
	case f.Rating == "" && f.Note != "":
		return Message{}, fmt.Errorf("%w: a note needs a rating", tenancy.ErrInvalid)
	case !utf8.ValidString(f.Note):
		return Message{}, fmt.Errorf("%w: note is not valid UTF-8", tenancy.ErrInvalid)
	case len(f.Note) > maxFeedbackNote:
		return Message{}, fmt.Errorf("%w: note is %d bytes, more than %d", tenancy.ErrInvalid, len(f.Note), maxFeedbackNote)
	}
	f.At = time.Time{}
	if f.Rating != "" {
		f.At = time.Now().UTC().Truncate(time.Microsecond)
	}
	m, err := retry(ctx, s, "feedback", workflowID, func() (Message, error) {
		return s.store.SetMessageFeedback(ctx, p, workflowID, messageID, f)
	})
	if err != nil {
		return Message{}, err
	}
	if _, err := s.Append(ctx, p, workflowID, EventMessageFeedback, MessageFeedbackData{MessageID: messageID, Rating: f.Rating, Note: f.Note, At: f.At}); err != nil {
		return Message{}, err
	}
	return m, nil
}
