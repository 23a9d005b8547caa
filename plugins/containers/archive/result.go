package archive

import (
	"fmt"
	"io"
)

// Entry is one item found by a walk: the input itself (Depth 0), a directory,
// a file or a nested container. A container's members follow it in
// Result.Entries.
type Entry struct {
	// Path is the container path: the input's name, then each layer's member
	// names joined by "/" ("archive.zip/folder-a/inner.tar/report.pdf"). Its
	// segments are never empty, ".", ".." or absolute.
	Path string
	// Name is the last segment of Path.
	Name string
	// Size is the entry's expanded size in bytes (0 for directories).
	Size int64
	// MIMEType is by extension, then by sniffing the first 512 bytes.
	MIMEType string
	// Depth is the number of containers around the entry: 0 for the input, 1
	// for its members.
	Depth int
	// Dir marks a directory entry; it has no bytes.
	Dir bool
	// Container is the kind of container the entry is, None for a plain file
	// (zip-based documents such as DOCX are files). Whether it was opened is
	// told by the absence of a Problem on its Path.
	Container Kind
	// Open streams the entry's bytes. The reader enforces the limits again
	// (declared size, checksum, ratio), since the bytes are expanded anew: an
	// entry inside a compressed stream re-expands that stream up to the entry,
	// and one inside a zip that was itself compressed re-reads that zip into
	// memory. Open may be called after Resolve returns and from several
	// goroutines if the input's ReaderAt allows it.
	Open func() (io.ReadCloser, error)
}

// Problem kinds.
const (
	ProblemTraversal   = "traversal"   // absolute, "..", backslash, drive letter or NUL in a name
	ProblemSymlink     = "symlink"     // a symbolic or hard link, or an entry below one
	ProblemSpecial     = "special"     // a device, FIFO or socket
	ProblemBomb        = "bomb"        // the compression ratio is exceeded
	ProblemDepth       = "depth"       // a container nested deeper than MaxDepth
	ProblemEncrypted   = "encrypted"   // needs a password
	ProblemTruncated   = "truncated"   // the bytes end early
	ProblemCorrupt     = "corrupt"     // malformed headers, checksum mismatch
	ProblemUnsupported = "unsupported" // a compression method or entry type not read here
	ProblemDuplicate   = "duplicate"   // a second entry with a name already used
	ProblemName        = "name"        // an empty, overlong or invalid name
	ProblemLimit       = "limit"       // a size, count or memory limit
	ProblemCanceled    = "canceled"    // the context ended the walk
	ProblemIO          = "io"          // reading the input failed
)

// Problem is an entry that was refused, and why. A Problem may also name a
// listed entry: a container that was not (fully) opened, or a file whose
// bytes failed while Walk's callback read them.
type Problem struct {
	// Path is the container path of the entry; a refused name appears as
	// written in the archive, with non-printable characters escaped.
	Path string
	// Reason says what was wrong in words a user can act on.
	Reason string
	// Kind is one of the Problem constants.
	Kind string
}

func (p Problem) String() string { return fmt.Sprintf("%s: %s (%s)", p.Path, p.Reason, p.Kind) }

// Result is what a walk found.
type Result struct {
	Entries  []Entry
	Problems []Problem
	// Truncated is set when the walk did not read everything: a limit ended
	// the whole walk (entry count, total size, overall ratio, cancellation)
	// or stopped one container's stream, or a container's bytes end or go
	// wrong before its last member. Entries holds everything before; Stops
	// says where and why.
	Truncated bool
	// Stops lists every place where reading ended early, in order.
	Stops []Stop
}

// Limit names used in Stop.Limit.
const (
	LimitFiles  = "MaxFiles"      // entries (and refused entries) of one walk
	LimitTotal  = "MaxTotalBytes" // bytes extracted by the whole walk
	LimitRatio  = "MaxRatio"      // expanded over compressed bytes
	LimitStream = "streamCap"     // what one compressed tar stream may expand to
)

// Stop is one place where reading ended early: a limit, or a container
// whose bytes end or go wrong before its last member.
type Stop struct {
	// Container is the path of the container whose reading stopped (the
	// input's name for the top level).
	Container string
	// At is the path of the last entry read before the stop, or of the one
	// refused by it; Container itself when none was.
	At string
	// Index is how many members of Container (directories and refused
	// entries included) were listed before the stop.
	Index int
	// Kind is a Problem kind: limit, bomb, truncated, corrupt, canceled, io.
	Kind string
	// Limit names the limit that stopped it (LimitFiles…), "" when the
	// archive itself is cut or damaged.
	Limit string
	// Reason says it in words.
	Reason string
	// Walk is set when the whole walk ended here, not only this container.
	Walk bool
}

func (s Stop) String() string {
	what := s.Kind
	if s.Limit != "" {
		what += " " + s.Limit
	}
	return fmt.Sprintf("%s stopped after %d entries at %s: %s (%s)", s.Container, s.Index, s.At, s.Reason, what)
}
