// Package memory is the workflows' memory: what the store that keeps it
// offers, and the entries recorded for tool results and entities.
package memory
