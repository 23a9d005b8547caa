// Package modeluse holds what a model call is and what it cost: the
// operations models are configured for and the Usage the meter records.
// They are plain values, so the SQL store (host/store) keeps usage records
// without importing the model client (host/llm) above it.
package modeluse
