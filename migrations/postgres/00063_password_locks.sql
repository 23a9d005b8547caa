-- +goose Up
-- Passwords (issue 26 item 5): a tenant's content is shared by every file
-- with its bytes, so a content read with a password stays locked for each
-- file until a password that opens it is given for that file.
--
-- content_indexes.password_read: the content was read with a password
-- given for one of its files (set when a password is tried on it).
-- files.password_given: a password that opens the file's content was given
-- for this file; its content is readable through it.
ALTER TABLE content_indexes ADD COLUMN password_read BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE files ADD COLUMN password_given BOOLEAN NOT NULL DEFAULT FALSE;
