package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"runtime/debug"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agenthost/agenthost/pdk/content"
)

// Errors callers can tell apart with errors.Is. Every error Extract returns
// wraps one of them, and names the file.
var (
	// ErrUnsupported: neither the MIME type, the extension nor the leading
	// bytes name a format this package reads.
	ErrUnsupported = errors.New("unsupported format")
	// ErrMalformed: the file is not what its type says, or is truncated.
	ErrMalformed = errors.New("malformed file")
	// ErrEncrypted: the file is password-protected (an OLE-wrapped OOXML
	// file, an encrypted zip entry or OpenDocument part, an encrypted Word
	// or Excel 97-2003 file).
	ErrEncrypted = errors.New("encrypted office file")
	// ErrEncryptedMail: a mail whose body is encrypted to its recipients
	// (S/MIME enveloped data, PGP): it is read only with a recipient's
	// private key, never with a password. It wraps ErrEncrypted.
	ErrEncryptedMail = fmt.Errorf("%w: encrypted mail", ErrEncrypted)
	// ErrLimit: a part the format cannot do without is larger than Limits
	// allow. Limits on output (text, objects) truncate instead.
	ErrLimit = errors.New("size limit exceeded")
)

// Limits bound what one extraction may read and produce. Zero fields take
// the defaults of DefaultLimits.
type Limits struct {
	// MaxTextBytes bounds the text of all objects together; the object
	// that crosses it is cut and extraction stops (Index.Structure
	// ["truncated"] says so).
	MaxTextBytes int64
	// MaxObjects bounds the number of objects; extraction stops there.
	MaxObjects int
	// MaxPartBytes bounds one decompressed zip part (and the bytes read of
	// a plain-text input). A required part beyond it is an ErrLimit, an
	// optional one (an image, a header) is skipped; reading stops at the
	// limit, whatever the zip header claims.
	MaxPartBytes int64
	// MaxUnzippedBytes bounds the decompressed bytes of all parts read
	// from one zip package together.
	MaxUnzippedBytes int64
	// BlockBytes is the size a text object aims at when a sheet, a CSV
	// file or a long text is split into blocks.
	BlockBytes int
	// InlineMediaBytes lets images and media up to this size be embedded
	// base64 in Data; 0 embeds nothing.
	InlineMediaBytes int64

	// unzipped counts the decompressed bytes of every package one
	// extraction opens (the file's and those embedded in it), so that
	// documents in documents share the one MaxUnzippedBytes; nil counts
	// per package.
	unzipped *int64
	// embedDepth is how many embedded documents deep a reader is.
	embedDepth int
}

// DefaultLimits are the limits used for zero fields. They fit a 32-bit Wasm
// guest: the largest single allocation is MaxPartBytes.
func DefaultLimits() Limits {
	return Limits{
		MaxTextBytes:     32 << 20,
		MaxObjects:       50_000,
		MaxPartBytes:     128 << 20,
		MaxUnzippedBytes: 512 << 20,
		BlockBytes:       16 << 10,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxTextBytes <= 0 {
		l.MaxTextBytes = d.MaxTextBytes
	}
	if l.MaxObjects <= 0 {
		l.MaxObjects = d.MaxObjects
	}
	if l.MaxPartBytes <= 0 {
		l.MaxPartBytes = d.MaxPartBytes
	}
	if l.MaxUnzippedBytes <= 0 {
		l.MaxUnzippedBytes = d.MaxUnzippedBytes
	}
	if l.BlockBytes <= 0 {
		l.BlockBytes = d.BlockBytes
	}
	return l
}

// input is what every format's extractor receives.
type input struct {
	r    io.ReaderAt
	size int64
	name string
	mime string // the MIME type dispatch settled on
	// declared is the MIME type the caller's type or the name's extension
	// gave, when the content overrode it (mime otherwise).
	declared string
	// charset is the charset parameter of the caller's MIME type, "" for
	// none: a claim the text extractors check against the bytes.
	charset string
	lim     Limits
}

// The MIME types of the OOXML, OpenDocument and legacy binary formats, as
// reported in the index.
const (
	mimeODT = "application/vnd.oasis.opendocument.text"
	mimeODS = "application/vnd.oasis.opendocument.spreadsheet"
	mimeODP = "application/vnd.oasis.opendocument.presentation"
	mimeDOC = "application/msword"
	mimeXLS = "application/vnd.ms-excel"
	mimePPT = "application/vnd.ms-powerpoint"
	// mimeOLE is an OLE compound file not yet told apart (sniffing).
	mimeOLE = "application/x-ole-storage"

	mimeDOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	mimeXLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	mimePPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
)

// format is one row of the dispatch table.
type format struct {
	mimes []string // the first is the canonical one reported in the index
	exts  []string
	run   func(ctx context.Context, in input, s *sink) error
}

// formats is the dispatch table; it is never modified.
var formats = []format{
	{mimes: []string{mimeDOCX,
		"application/vnd.ms-word.document.macroenabled.12",
		"application/vnd.openxmlformats-officedocument.wordprocessingml.template"},
		exts: []string{".docx", ".docm", ".dotx"}, run: extractDOCX},
	{mimes: []string{mimeXLSX,
		"application/vnd.ms-excel.sheet.macroenabled.12",
		"application/vnd.openxmlformats-officedocument.spreadsheetml.template"},
		exts: []string{".xlsx", ".xlsm", ".xltx"}, run: extractXLSX},
	{mimes: []string{mimePPTX,
		"application/vnd.ms-powerpoint.presentation.macroenabled.12",
		"application/vnd.openxmlformats-officedocument.presentationml.slideshow"},
		exts: []string{".pptx", ".pptm", ".ppsx"}, run: extractPPTX},
	{mimes: []string{mimeODT, mimeODT + "-template"}, exts: []string{".odt", ".ott"}, run: extractODF},
	{mimes: []string{mimeODS, mimeODS + "-template"}, exts: []string{".ods", ".ots"}, run: extractODF},
	{mimes: []string{mimeODP, mimeODP + "-template"}, exts: []string{".odp", ".otp"}, run: extractODF},
	{mimes: []string{mimeRTF, "text/rtf", "application/x-rtf"}, exts: []string{".rtf"}, run: extractRTF},
	{mimes: []string{mimeDOC, "application/vnd.ms-word"}, exts: []string{".doc", ".dot"}, run: extractOLE},
	{mimes: []string{mimeXLS, "application/x-msexcel", "application/x-excel"}, exts: []string{".xls", ".xlt"}, run: extractOLE},
	{mimes: []string{mimePPT, "application/mspowerpoint", "application/x-mspowerpoint"}, exts: []string{".ppt", ".pps", ".pot"}, run: extractOLE},
	{mimes: []string{mimeOLE}, run: extractOLE},
	{mimes: []string{mimeMSG, "application/x-msg"}, exts: []string{".msg"}, run: extractOLE},
	{mimes: []string{mimeEPUB}, exts: []string{".epub"}, run: extractEPUB},
	{mimes: []string{mimeEML, "message/global"}, exts: []string{".eml"}, run: extractEML},
	{mimes: []string{mimeMbox}, exts: []string{".mbox", ".mbx"}, run: extractMbox},
	{mimes: []string{mimeMHTML, "application/x-mimearchive", "message/x-mhtml"}, exts: []string{".mht", ".mhtml"}, run: extractMHTML},
	{mimes: []string{"text/markdown", "text/x-markdown"}, exts: []string{".md", ".markdown"}, run: extractMarkdown},
	{mimes: []string{"text/csv", "text/tab-separated-values", "application/csv"}, exts: []string{".csv", ".tsv"}, run: extractCSV},
	{mimes: []string{"application/json", "application/x-ndjson", "application/ld+json"}, exts: []string{".json", ".jsonl", ".ndjson", ".geojson"}, run: extractJSON},
	{mimes: []string{"application/xml", "text/xml"}, exts: []string{".xml"}, run: extractXML},
	{mimes: []string{"text/html", "application/xhtml+xml"}, exts: []string{".html", ".htm", ".xhtml"}, run: extractHTML},
	{mimes: []string{"text/plain"}, exts: []string{".txt", ".text", ".log"}, run: extractPlain},
	{mimes: []string{mimeSVG}, exts: []string{".svg"}, run: extractSVG},
	{mimes: []string{"image/png"}, exts: []string{".png"}, run: extractImage},
	{mimes: []string{"image/jpeg"}, exts: []string{".jpg", ".jpeg", ".jpe"}, run: extractImage},
	{mimes: []string{"image/gif"}, exts: []string{".gif"}, run: extractImage},
	{mimes: []string{"image/webp"}, exts: []string{".webp"}, run: extractImage},
	{mimes: []string{"image/bmp", "image/x-ms-bmp"}, exts: []string{".bmp"}, run: extractImage},
	{mimes: []string{"image/tiff"}, exts: []string{".tif", ".tiff"}, run: extractImage},
	{mimes: []string{"audio/mpeg", "audio/mp3"}, exts: []string{".mp3"}, run: extractMedia},
	{mimes: []string{"audio/wav", "audio/x-wav", "audio/vnd.wave", "audio/wave"}, exts: []string{".wav"}, run: extractMedia},
	{mimes: []string{"video/mp4", "audio/mp4", "audio/x-m4a", "video/quicktime"}, exts: []string{".mp4", ".m4a", ".m4v", ".mov"}, run: extractMedia},
	{mimes: []string{"video/webm", "audio/webm", "video/x-matroska", "audio/x-matroska"}, exts: []string{".webm", ".mkv", ".mka"}, run: extractMedia},
}

// Supported returns the MIME types Extract reads, sorted.
func Supported() []string {
	var out []string
	for _, f := range formats {
		out = append(out, f.mimes...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Extract reads one file and returns its content index and objects.
//
// The format is chosen by mimeType, then by name's extension, then by the
// file's leading bytes. Types this package does not read (such as
// application/octet-stream or application/zip) count as absent, and
// text/plain yields to any known extension. Output limits
// truncate; a malformed, encrypted or over-limit file is an error that wraps
// one of the package's Err values. Extract never panics: a bug reached by a
// hostile input becomes an ErrMalformed error.
func Extract(ctx context.Context, r io.ReaderAt, size int64, name, mimeType string, lim Limits) (idx content.Index, objs []content.Object, err error) {
	defer func() {
		if p := recover(); p != nil {
			idx, objs = content.Index{}, nil
			err = fmt.Errorf("extract %s: %w: internal error: %v (at %s)", name, ErrMalformed, p, panicSite(debug.Stack()))
		}
	}()
	if size < 0 {
		return content.Index{}, nil, fmt.Errorf("extract %s: %w: negative size", name, ErrMalformed)
	}
	f, mt, declared, ok := chooseChecked(r, size, name, mimeType)
	if !ok {
		return content.Index{}, nil, fmt.Errorf("extract %s (%q): %w", name, mimeType, ErrUnsupported)
	}
	in := input{r: r, size: size, name: name, mime: mt, declared: declared, charset: charsetParam(mimeType), lim: lim.withDefaults()}
	in.lim.unzipped, in.lim.embedDepth = new(int64), 0
	s := newSink(ctx, in.lim)
	// Readers of embedded documents dispatch through the sink: the
	// dispatch table holds those readers, so they cannot name it.
	s.choose = chooseChecked
	if err := f.run(ctx, in, s); err != nil {
		return content.Index{}, nil, fmt.Errorf("extract %s: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return content.Index{}, nil, fmt.Errorf("extract %s: %w", name, err)
	}
	if s.mime != "" {
		mt = s.mime // the format found inside (an OLE compound file)
	}
	idx = content.Index{
		FileName:     name,
		MIMEType:     mt,
		TotalObjects: len(s.objs),
		TotalSize:    size,
		Structure:    s.structure,
		Objects:      make([]content.Summary, 0, len(s.objs)),
	}
	if s.truncated != "" {
		idx.Structure["truncated"] = s.truncated
	}
	for _, o := range s.objs {
		idx.Objects = append(idx.Objects, content.Summarize(o))
	}
	return idx, s.objs, nil
}

// charsetParam is the charset parameter of a MIME type, "" for none.
func charsetParam(mimeType string) string {
	_, params, err := mime.ParseMediaType(mimeType)
	if err != nil {
		return ""
	}
	return params["charset"]
}

// choose picks the format: MIME type, extension, then sniffing.
func choose(r io.ReaderAt, size int64, name, mimeType string) (format, string, bool) {
	mt := strings.ToLower(strings.TrimSpace(mimeType))
	if parsed, _, err := mime.ParseMediaType(mt); err == nil {
		mt = parsed
	}
	ext := strings.ToLower(path.Ext(strings.ReplaceAll(name, `\`, "/")))
	byMIME, mimeOK := lookup(func(f format) bool { return slices.Contains(f.mimes, mt) })
	byExt, extOK := lookup(func(f format) bool { return slices.Contains(f.exts, ext) })
	switch {
	case mimeOK && mt == "text/plain" && extOK:
		// Many systems send text/plain for any file they do not know.
		return byExt, byExt.mimes[0], true
	case mimeOK:
		return byMIME, mt, true
	case extOK:
		return byExt, byExt.mimes[0], true
	}
	if m := sniff(r, size); m != "" {
		if f, ok := lookup(func(f format) bool { return slices.Contains(f.mimes, m) }); ok {
			return f, m, true
		}
	}
	return format{}, "", false
}

// chooseChecked is choose, then the content has the last word when it shows
// a document format for sure (strongSniff): a type or an extension that
// says otherwise would turn the document into garbage.
// declared is what the type and the extension said (mt unless the content
// overrode them).
func chooseChecked(r io.ReaderAt, size int64, name, mimeType string) (f format, mt, declared string, ok bool) {
	f, mt, ok = choose(r, size, name, mimeType)
	m := sniff(r, size)
	if !strongSniff(m) {
		return f, mt, mt, ok
	}
	sf, sok := lookup(func(f format) bool { return slices.Contains(f.mimes, m) })
	if !sok || ok && slices.Contains(f.mimes, m) {
		return f, mt, mt, ok
	}
	if ok && m == mimeOLE && (f.mimes[0] == mimeDOC || f.mimes[0] == mimeXLS || f.mimes[0] == mimePPT || f.mimes[0] == mimeMSG) {
		return f, mt, mt, ok // the compound file tells which itself
	}
	return sf, m, mt, true
}

func lookup(match func(format) bool) (format, bool) {
	for _, f := range formats {
		if match(f) {
			return f, true
		}
	}
	return format{}, false
}

// sink collects objects, numbers them and enforces the output limits.
type sink struct {
	ctx       context.Context
	lim       Limits
	objs      []content.Object
	text      int64
	truncated string // why output stopped early; "" when it did not
	structure map[string]any
	mime      string // the MIME type the extractor found, when it knows better than dispatch
	// choose picks the reader of an embedded document (chooseChecked).
	choose func(r io.ReaderAt, size int64, name, mimeType string) (format, string, string, bool)
}

func newSink(ctx context.Context, lim Limits) *sink {
	return &sink{ctx: ctx, lim: lim, structure: map[string]any{}}
}

// full reports whether a limit stopped output, or the context is done;
// extractors check it in their loops and stop early.
func (s *sink) full() bool {
	return s.truncated != "" || s.ctx.Err() != nil
}

// add appends o, giving it its ID and sequence. It returns false once output
// is full, so extractors stop reading.
func (s *sink) add(o content.Object) bool {
	if s.full() {
		return false
	}
	if len(s.objs) >= s.lim.MaxObjects {
		s.truncated = fmt.Sprintf("object limit (%d) reached", s.lim.MaxObjects)
		return false
	}
	stop := false
	if o.ContentType == content.Text {
		room := s.lim.MaxTextBytes - s.text
		if int64(len(o.Data)) > room {
			o.Data = cutUTF8(o.Data, int(room))
			if o.Metadata == nil {
				o.Metadata = map[string]any{}
			}
			o.Metadata["truncated"] = true
			s.truncated = fmt.Sprintf("text limit (%d bytes) reached", s.lim.MaxTextBytes)
			stop = true
			if o.Data == "" {
				return false
			}
		}
		s.text += int64(len(o.Data))
	}
	o.Sequence = len(s.objs) + 1
	o.ID = fmt.Sprintf("o%d", o.Sequence)
	s.objs = append(s.objs, o)
	return !stop
}

// cutUTF8 returns the longest prefix of s of at most n bytes that does not
// split a rune.
func cutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// panicSite picks the panicking function and line out of a stack trace:
// enough to find the bug, without a whole trace in an error message.
func panicSite(stack []byte) string {
	ls := strings.Split(string(stack), "\n")
	for i, l := range ls {
		if strings.HasPrefix(l, "panic(") && i+3 < len(ls) {
			return strings.TrimSpace(ls[i+2]) + " " + strings.TrimSpace(strings.Fields(ls[i+3] + " ")[0])
		}
	}
	return "unknown"
}
