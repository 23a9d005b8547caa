package wasm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"
)

// OutputFile is the metadata of one file a plugin hands back to the host
// (capability "output"): a container's member, named by its container path.
type OutputFile struct {
	// Path names the file, e.g. "archive.zip/docs/report.pdf".
	Path string `json:"path"`
	// Size is the announced length in bytes, −1 when unknown. When known the
	// file must have exactly that many bytes.
	Size int64 `json:"size"`
	// MIMEType is the plugin's guess (by extension or sniffing).
	MIMEType string `json:"mimeType,omitempty"`
	// Container marks a nested container listed for its path: it has no
	// bytes (its members follow as files of their own).
	Container bool `json:"container,omitempty"`
}

// OutputSink receives the files a call emits. The host gives one in
// CallOptions.Output; a call without one is refused the capability. It is
// used from one goroutine, one file at a time.
type OutputSink interface {
	// Begin starts a file. An error refuses it (the guest learns why).
	Begin(ctx context.Context, f OutputFile) (OutputWriter, error)
	// Fail records that an entry could not be emitted: its path, a kind
	// (a short word such as "bomb", "traversal") and a reason for a user.
	Fail(ctx context.Context, path, kind, reason string) error
}

// OutputWriter receives one file's bytes, then Commit or Abort, exactly once.
type OutputWriter interface {
	Write(p []byte) (int, error)
	// Commit ends a complete file; the string is the sink's name for it
	// (e.g. the sha256 it was stored under), given back to the guest.
	Commit(ctx context.Context) (string, error)
	// Abort discards the file: the guest failed it, lied about its size, or
	// the call ended with it open.
	Abort(reason error)
}

// OutputLimits bound what one call may emit. Zero fields take the defaults
// of the container limits (docs/knowledge.md#containers).
type OutputLimits struct {
	// MaxFiles bounds the files begun (containers included); failures are
	// bounded separately by MaxFiles + 16 (a walk reports at most one problem
	// per entry, plus the one that ends it).
	MaxFiles int
	// MaxBytes bounds the bytes of all files together, MaxFileBytes one file.
	MaxBytes, MaxFileBytes int64
}

// Default output limits: 10,000 files and 500 MiB, as the container limits.
const (
	DefaultOutputFiles = 10_000
	DefaultOutputBytes = 500 << 20
)

func (l OutputLimits) withDefaults() OutputLimits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultOutputFiles
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultOutputBytes
	}
	if l.MaxFileBytes <= 0 || l.MaxFileBytes > l.MaxBytes {
		l.MaxFileBytes = l.MaxBytes
	}
	return l
}

// maxOutputPath bounds a path (in bytes); maxOutputReason a failure's reason.
const (
	maxOutputPath   = 4096
	maxOutputReason = 2000
)

// outputState is one call's use of the capability.
type outputState struct {
	lim      OutputLimits
	files    int
	failures int
	bytes    int64

	open     OutputWriter // the file being written, nil between files
	openPath string
	declared int64 // −1 unknown
	written  int64
}

// output returns the call's state, nil when the call has no sink.
func (c *Call) output() *outputState {
	if c.opts == nil || c.opts.Output == nil {
		return nil
	}
	if c.out == nil {
		c.out = &outputState{lim: c.opts.OutputLimits.withDefaults()}
	}
	return c.out
}

// endOutput aborts a file left open when the call ends (the guest returned,
// trapped or was stopped in the middle of it).
func (c *Call) endOutput() {
	if c.out != nil && c.out.open != nil {
		c.out.open.Abort(fmt.Errorf("the call ended while %s was being written", c.out.openPath))
		c.out.open = nil
	}
}

func outputErr(code, format string, args ...any) error {
	return &CapabilityError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// OutputCapability links agenthost:output, the way a plugin hands files back
// to the host without copying their bytes through JSON (the container
// extractor emits an archive's members with it):
//
//   - begin(req) -> resp (JSON): {path, size (−1 unknown), mimeType,
//     container?} starts a file; the response tells the budget left
//     {bytesLeft, filesLeft}. Refused (not trapped) when the call has no
//     sink, a file is open, the path is empty or overlong, or the size or
//     the file count passes the call's limits, so the plugin can record the
//     entry as failed and go on.
//   - write(ptr i32, len i32) -> i32 copies len bytes of guest memory at ptr
//     into the open file (at most 16 MiB a call) and returns len. Writing
//     without a file, past the announced size or past the byte budget traps
//     the call: the guest was told the limits and broke them.
//   - end(req) -> resp (JSON): {} ends the open file → {size, id}; a file
//     shorter than announced is discarded with an error.
//   - fail(req) -> resp (JSON): {path, kind, reason} records an entry that
//     could not be emitted; an open file of that path is discarded.
//
// Output goes only to the sink the caller gave for this call, so it has no
// effect outside the call and read-only tools get it too.
func OutputCapability() Capability {
	const mod = CapabilityPrefix + "output"
	return Capability{
		Name:        "output",
		Description: "hand files back to the host, e.g. the members of an archive (extractors)",
		Functions: []HostFunction{
			JSONFunction(mod, "begin", false, func(ctx context.Context, c *Call, req json.RawMessage) (any, error) {
				o := c.output()
				if o == nil {
					return nil, outputErr("no_output", "output.begin: this call has no output sink")
				}
				var f OutputFile
				f.Size = -1
				if err := json.Unmarshal(req, &f); err != nil {
					return nil, outputErr("invalid_request", "output.begin: %v", err)
				}
				if o.open != nil {
					return nil, outputErr("invalid_request", "output.begin: %s is still open; end or fail it first", o.openPath)
				}
				if err := checkOutputPath(f.Path); err != nil {
					return nil, err
				}
				if len(f.MIMEType) > 255 {
					return nil, outputErr("invalid_request", "output.begin: mimeType longer than 255 bytes")
				}
				switch {
				case f.Size < -1:
					return nil, outputErr("invalid_request", "output.begin: %s: size %d is negative", f.Path, f.Size)
				case o.files >= o.lim.MaxFiles:
					return nil, outputErr("limit", "output.begin: %s: more than %d files in one call", f.Path, o.lim.MaxFiles)
				case f.Size > o.lim.MaxFileBytes:
					return nil, outputErr("limit", "output.begin: %s: %d bytes is more than the %d a file may have", f.Path, f.Size, o.lim.MaxFileBytes)
				case f.Size > o.lim.MaxBytes-o.bytes:
					return nil, outputErr("limit", "output.begin: %s: %d bytes would pass the call's %d bytes", f.Path, f.Size, o.lim.MaxBytes)
				case f.Container && f.Size > 0:
					f.Size = 0 // a container's bytes are its members'
				}
				w, err := c.opts.Output.Begin(ctx, f)
				if err != nil {
					return nil, outputErr("refused", "output.begin: %s: %v", f.Path, err)
				}
				o.files++
				o.open, o.openPath, o.declared, o.written = w, f.Path, f.Size, 0
				if f.Container {
					o.declared = 0
				}
				return map[string]int64{"bytesLeft": o.lim.MaxBytes - o.bytes, "filesLeft": int64(o.lim.MaxFiles - o.files)}, nil
			}),
			{
				Module: mod, Name: "write",
				Params:  []api.ValueType{api.ValueTypeI32, api.ValueTypeI32},
				Results: []api.ValueType{api.ValueTypeI32},
				Func: func(_ context.Context, c *Call, s []uint64) {
					o := c.output()
					if o == nil {
						panic(c.Fail(CodeCapabilityDenied, "output.write: this call has no output sink"))
					}
					ptr, n := uint32(s[0]), uint32(s[1])
					if o.open == nil {
						panic(c.Fail(CodeTrap, "output.write: no file begun"))
					}
					if n > maxReadAt {
						panic(c.Fail(CodeTrap, "output.write: %d bytes in one write (at most %d)", n, maxReadAt))
					}
					if o.declared >= 0 && o.written+int64(n) > o.declared {
						panic(c.Fail(CodeTrap, "output.write: %s: more than the %d bytes announced", o.openPath, o.declared))
					}
					if o.written+int64(n) > o.lim.MaxFileBytes || o.bytes+int64(n) > o.lim.MaxBytes {
						panic(c.Fail(CodeOutputTooLarge, "output.write: %s: past the call's output limits (%d bytes a file, %d in all)", o.openPath, o.lim.MaxFileBytes, o.lim.MaxBytes))
					}
					if n == 0 {
						s[0] = 0
						return
					}
					buf, ok := c.mem.Read(ptr, n)
					if !ok {
						panic(c.Fail(CodeTrap, "output.write: source %d+%d is outside the guest's memory", ptr, n))
					}
					// buf aliases guest memory: the writer must not keep it
					// (io.Writer's contract), which every sink honours.
					if _, err := o.open.Write(buf); err != nil {
						o.open.Abort(err)
						o.open = nil
						panic(c.Fail(CodePluginError, "output.write: %s: the host could not store it: %v", o.openPath, err))
					}
					o.written += int64(n)
					o.bytes += int64(n)
					s[0] = uint64(n)
				},
			},
			JSONFunction(mod, "end", false, func(ctx context.Context, c *Call, _ json.RawMessage) (any, error) {
				o := c.output()
				if o == nil {
					return nil, outputErr("no_output", "output.end: this call has no output sink")
				}
				if o.open == nil {
					return nil, outputErr("invalid_request", "output.end: no file begun")
				}
				w, path := o.open, o.openPath
				o.open = nil
				if o.declared >= 0 && o.written != o.declared {
					err := outputErr("size_mismatch", "output.end: %s: %d bytes written, %d announced; discarded", path, o.written, o.declared)
					w.Abort(err)
					return nil, err
				}
				id, err := w.Commit(ctx)
				if err != nil {
					return nil, outputErr("refused", "output.end: %s: %v", path, err)
				}
				return map[string]any{"size": o.written, "id": id}, nil
			}),
			JSONFunction(mod, "fail", false, func(ctx context.Context, c *Call, req json.RawMessage) (any, error) {
				o := c.output()
				if o == nil {
					return nil, outputErr("no_output", "output.fail: this call has no output sink")
				}
				var r struct {
					Path   string `json:"path"`
					Kind   string `json:"kind"`
					Reason string `json:"reason"`
				}
				if err := json.Unmarshal(req, &r); err != nil {
					return nil, outputErr("invalid_request", "output.fail: %v", err)
				}
				if err := checkOutputPath(r.Path); err != nil {
					return nil, err
				}
				if o.failures >= o.lim.MaxFiles+16 {
					return nil, outputErr("limit", "output.fail: more than %d failures in one call", o.lim.MaxFiles+16)
				}
				o.failures++
				r.Kind = clipUTF8(r.Kind, 32)
				r.Reason = clipUTF8(r.Reason, maxOutputReason)
				if r.Kind == "" {
					r.Kind = "error"
				}
				if o.open != nil && o.openPath == r.Path {
					o.open.Abort(fmt.Errorf("%s: %s", r.Kind, r.Reason))
					o.open = nil
				}
				if err := c.opts.Output.Fail(ctx, r.Path, r.Kind, r.Reason); err != nil {
					return nil, outputErr("refused", "output.fail: %s: %v", r.Path, err)
				}
				return struct{}{}, nil
			}),
		},
	}
}

func checkOutputPath(p string) error {
	switch {
	case p == "":
		return outputErr("invalid_request", "output: empty path")
	case len(p) > maxOutputPath:
		return outputErr("invalid_request", "output: path longer than %d bytes", maxOutputPath)
	case !utf8.ValidString(p) || strings.ContainsRune(p, 0):
		return outputErr("invalid_request", "output: path %q is not valid UTF-8 text", p)
	}
	return nil
}

// clipUTF8 cuts s to at most n bytes without splitting a character.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
