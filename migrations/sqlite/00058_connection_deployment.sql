-- +goose Up
-- Which deployment of the provider a connection reaches ("cloud",
-- "datacenter"; "" when the site's address tells): Jira Data Center and
-- Server speak REST v2 (search by startAt, descriptions as wiki markup,
-- personal access tokens) where Cloud speaks v3 (issue 29, item 2).
ALTER TABLE connections ADD COLUMN deployment TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE connections DROP COLUMN deployment;
