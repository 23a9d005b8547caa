// Package chunk cuts a content's objects into chunks of about Tokens
// tokens, each inside one object so that it keeps where it came from (its
// object, page and section): the unit the knowledge store indexes
// lexically and by vectors (docs/knowledge.md).
package chunk
