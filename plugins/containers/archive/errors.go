package archive

import (
	"compress/bzip2"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
)

// Errors returned by Entry.Open readers (wrapped with details) and used to
// classify problems; test them with errors.Is.
var (
	ErrBomb        = errors.New("compression ratio exceeded")
	ErrLimit       = errors.New("limit exceeded")
	ErrTruncated   = errors.New("truncated")
	ErrCorrupt     = errors.New("corrupt")
	ErrUnsupported = errors.New("unsupported")
	ErrEncrypted   = errors.New("encrypted")
)

// problemKind maps an error met while reading to a Problem kind.
func problemKind(err error) string {
	var corrupt flate.CorruptInputError
	var structural bzip2.StructuralError
	switch {
	case errors.Is(err, ErrBomb):
		return ProblemBomb
	case errors.Is(err, ErrLimit):
		return ProblemLimit
	case errors.Is(err, ErrTruncated), errors.Is(err, io.ErrUnexpectedEOF):
		return ProblemTruncated
	case errors.Is(err, ErrUnsupported):
		return ProblemUnsupported
	case errors.Is(err, ErrEncrypted):
		return ProblemEncrypted
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return ProblemCanceled
	case errors.Is(err, ErrCorrupt), errors.As(err, &corrupt), errors.As(err, &structural),
		errors.Is(err, gzip.ErrHeader), errors.Is(err, gzip.ErrChecksum):
		return ProblemCorrupt
	}
	return ProblemIO
}

// readError gives a decompressor's error our sentinel, so callers of Open can
// tell a cut stream from a malformed one without knowing the format.
func readError(err error) error {
	var corrupt flate.CorruptInputError
	var structural bzip2.StructuralError
	switch {
	case err == nil, err == io.EOF:
		return err
	case errors.Is(err, ErrCorrupt), errors.Is(err, ErrTruncated), errors.Is(err, ErrBomb), errors.Is(err, ErrLimit):
		return err
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: the data ends early", ErrTruncated)
	case errors.As(err, &corrupt), errors.As(err, &structural), errors.Is(err, gzip.ErrHeader), errors.Is(err, gzip.ErrChecksum):
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return err
}

// limitOf names the limit behind a meter's error, "" when none.
func limitOf(err error) string {
	switch {
	case errors.Is(err, ErrBomb):
		return LimitRatio
	case errors.Is(err, ErrLimit):
		return LimitStream
	}
	return ""
}
