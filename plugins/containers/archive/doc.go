// Package archive resolves containers — ZIP, TAR, compressed streams (gzip,
// bzip2 and xz, alone or around a tar), 7z, RAR 4 and 5, and folders —
// recursively into their files, each named by its container path
// ("archive.zip/folder-a/inner.tar/report.pdf").
//
// It is the core of the sandboxed containers plugin, so it is pure Go (no cgo,
// no os/exec) and never writes to a file system: the input arrives as an
// io.ReaderAt with its size (the host serves large inputs by range), nested
// containers are read as streams or, when they need random access (a zip
// inside a compressed entry), into a bounded buffer, and every file's bytes are
// streamed by Entry.Open on demand.
//
// Every input is treated as hostile. Resolve refuses path-traversal names,
// symbolic and hard links, device entries, duplicate names, encrypted and
// unsupported entries, each as a Problem naming the entry, and goes on with
// the rest of the archive. Limits bound the nesting depth, the bytes expanded
// (per file and in total), the number of entries and the compression ratio;
// a ratio bomb is stopped by its headers where they tell, and otherwise while
// expanding, as soon as the ratio is exceeded, never after (a tar's own
// headers and padding are not held against it). A failure of one entry's
// bytes (a size that lies, a CRC mismatch, a corrupt or cut stream) is that
// entry's Problem, reported once; a reader never gives a byte past the size
// the entry declares. Every early stop — a limit that ends the whole walk
// (entry count, total size, overall ratio), a stream that runs over, a
// container whose bytes end or go wrong — is a Stop in Result.Stops (which
// container, which limit, after which entry) and sets Result.Truncated;
// everything resolved before it is kept.
package archive
