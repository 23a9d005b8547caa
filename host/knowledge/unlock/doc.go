// Package unlock takes the passwords people give for their encrypted files
// (docs/knowledge.md#passwords): how a content waiting for its password is
// shown (StatusEncrypted), the password carried to the extractor in one
// call's context only, and the attempts bounded per file (Service).
package unlock
