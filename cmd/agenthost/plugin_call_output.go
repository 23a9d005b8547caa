package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"

	"github.com/agenthost/agenthost/host/wasm"
)

// listingSink is the output sink of `plugin call`: it stores nothing and
// lists each file a plugin emits (the members of an archive, for the
// container extractor) with its size and sha256, and each failure with its
// reason, one line each.
type listingSink struct{ w io.Writer }

type listingFile struct {
	s    listingSink
	f    wasm.OutputFile
	h    hash.Hash
	size int64
}

// Begin implements wasm.OutputSink.
func (s listingSink) Begin(_ context.Context, f wasm.OutputFile) (wasm.OutputWriter, error) {
	return &listingFile{s: s, f: f, h: sha256.New()}, nil
}

// Fail implements wasm.OutputSink.
func (s listingSink) Fail(_ context.Context, path, kind, reason string) error {
	fmt.Fprintf(s.w, "failed    %-12s %s: %s\n", kind, path, reason)
	return nil
}

func (l *listingFile) Write(p []byte) (int, error) {
	l.size += int64(len(p))
	return l.h.Write(p)
}

func (l *listingFile) Commit(context.Context) (string, error) {
	if l.f.Container {
		fmt.Fprintf(l.s.w, "container %12s %s\n", "", l.f.Path)
		return "", nil
	}
	sha := hex.EncodeToString(l.h.Sum(nil))
	fmt.Fprintf(l.s.w, "file      %12d %s %s %s\n", l.size, sha[:12], l.f.Path, l.f.MIMEType)
	return sha, nil
}

func (l *listingFile) Abort(err error) {
	fmt.Fprintf(l.s.w, "discarded %12d %s: %v\n", l.size, l.f.Path, err)
}
