package mcpserver

import (
	"bytes"
	"net/http"
)

// primeName is the event name the SDK gives a stream's priming event (an
// id and empty data, SEP-1699). The specification names none, so clients
// read it as a "message" event with no data; the official Python SDK logs a
// warning for every event named otherwise, that is on every call. The name
// is dropped on the way out.
var primeName = []byte("event: prime\n")

// unnamedPrime drops primeName from the events written through it. The SDK
// writes each event with one Write, so an event's start is a Write's start.
type unnamedPrime struct{ http.ResponseWriter }

func (w unnamedPrime) Write(p []byte) (int, error) {
	if rest, ok := bytes.CutPrefix(p, primeName); ok {
		n, err := w.ResponseWriter.Write(rest)
		if err != nil {
			return n, err
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach Flush and the deadlines.
func (w unnamedPrime) Unwrap() http.ResponseWriter { return w.ResponseWriter }
