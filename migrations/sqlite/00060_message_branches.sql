-- +goose Up
-- A conversation's branches (issue 28): the turn its shown branch runs
-- through ('' is the newest), and a person's feedback on an answer, kept
-- with the message for evaluation ('' rating: none; at in microseconds).
-- root marks a prompt that starts the conversation (the first, or an edit
-- of it): a turn without a parent otherwise follows the turn before it.
ALTER TABLE workflows ADD COLUMN branch_message_id TEXT NOT NULL DEFAULT '';
ALTER TABLE workflow_messages ADD COLUMN feedback_rating TEXT NOT NULL DEFAULT '' CHECK (feedback_rating IN ('', 'helpful', 'unhelpful'));
ALTER TABLE workflow_messages ADD COLUMN feedback_note TEXT NOT NULL DEFAULT '';
ALTER TABLE workflow_messages ADD COLUMN root INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflow_messages ADD COLUMN feedback_at INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE workflow_messages DROP COLUMN root;
ALTER TABLE workflow_messages DROP COLUMN feedback_at;
ALTER TABLE workflow_messages DROP COLUMN feedback_note;
ALTER TABLE workflow_messages DROP COLUMN feedback_rating;
ALTER TABLE workflows DROP COLUMN branch_message_id;
