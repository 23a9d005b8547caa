package extract

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/pdk/content"
)

// Shorter names for the content types used throughout.
const (
	contentImage = content.Image
	contentVideo = content.VideoStream
	contentAudio = content.AudioStream
	contentOther = content.Other
)

// mediaInfo is what a file's header says about an image or a stream.
type mediaInfo struct {
	kind          content.Type
	format        string
	size          int64
	width, height int
	duration      float64 // seconds; 0 when the header does not say
	codec         string
	sampleRate    int
	channels      int
	bitrate       int // bits per second
	title         string
	problem       string // why the header could not be read, if it could not
}

// object turns the info into a content object; encoding says where its bytes
// are ("file", "part").
func (m mediaInfo) object(encoding string) content.Object {
	md := map[string]any{"encoding": encoding, "size": m.size}
	if m.format != "" {
		md["format"] = m.format
	}
	if m.width > 0 && m.height > 0 {
		md["width"], md["height"] = m.width, m.height
		md["dimensions"] = strconv.Itoa(m.width) + "x" + strconv.Itoa(m.height)
	}
	if m.duration > 0 && !math.IsInf(m.duration, 0) && !math.IsNaN(m.duration) {
		md["duration"] = math.Round(m.duration*1000) / 1000
	}
	if m.codec != "" {
		md["codec"] = m.codec
	}
	if m.sampleRate > 0 {
		md["sampleRate"] = m.sampleRate
	}
	if m.channels > 0 {
		md["channels"] = m.channels
	}
	if m.bitrate > 0 {
		md["bitrate"] = m.bitrate
	}
	if m.title != "" {
		md["title"] = m.title
	}
	if m.problem != "" {
		md["problem"] = m.problem
	}
	kind := m.kind
	if kind == "" {
		kind = contentOther
	}
	return content.Object{ContentType: kind, Metadata: md}
}

// inline embeds the bytes of a small object base64 in Data.
func inline(o *content.Object, r io.Reader) {
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, r); err != nil {
		return
	}
	o.Data = base64.StdEncoding.EncodeToString(buf.Bytes())
	o.Metadata["encoding"] = "base64"
}

// mediaFormat names an audio or video container from its leading bytes,
// then from the name's extension.
func mediaFormat(head []byte, name string) string {
	switch {
	case len(head) >= 12 && (string(head[:4]) == "RIFF" || string(head[:4]) == "RF64") && string(head[8:12]) == "WAVE":
		return "wav"
	case len(head) >= 8 && string(head[4:8]) == "ftyp":
		return "mp4"
	case bytes.HasPrefix(head, []byte{0x1a, 0x45, 0xdf, 0xa3}):
		return "matroska"
	case bytes.HasPrefix(head, []byte("ID3")):
		return "mp3"
	case len(head) >= 4 && head[0] == 0xff && head[1]&0xe0 == 0xe0:
		if _, ok := parseMP3Header(head[:4]); ok {
			return "mp3"
		}
	}
	switch ext := strings.ToLower(strings.TrimPrefix(path.Ext(name), ".")); ext {
	case "mp3", "wav":
		return ext
	case "mp4", "m4a", "m4v", "mov":
		return "mp4"
	case "webm", "mkv", "mka":
		return "matroska"
	}
	return ""
}

// probeMedia reads what the container header says. It never fails: an
// unreadable header leaves the fields empty and says why in problem.
func probeMedia(r io.ReaderAt, size int64, name string) mediaInfo {
	head := make([]byte, min(size, 64))
	n, _ := r.ReadAt(head, 0)
	head = head[:n]
	var (
		info mediaInfo
		err  error
	)
	switch f := mediaFormat(head, name); f {
	case "wav":
		info, err = probeWAV(r, size)
	case "mp3":
		info, err = probeMP3(r, size)
	case "mp4":
		info, err = probeMP4(r, size)
	case "matroska":
		info, err = probeMatroska(r, size)
	default:
		if f := imageFormat(head, name); f != "" {
			return probeImage(r, size, name)
		}
		info = mediaInfo{kind: contentOther, format: strings.TrimPrefix(strings.ToLower(path.Ext(name)), ".")}
	}
	info.size = size
	if err != nil {
		info.problem = err.Error()
	}
	return info
}

// extractMedia makes the one object of an audio or video file.
func extractMedia(ctx context.Context, in input, s *sink) error {
	info := probeMedia(in.r, in.size, in.name)
	if info.problem != "" {
		return fmt.Errorf("%w: %s header: %s", ErrMalformed, info.format, info.problem)
	}
	if info.kind != contentAudio && info.kind != contentVideo {
		return fmt.Errorf("%w: not an audio or video container this package reads", ErrMalformed)
	}
	o := info.object("file")
	o.Ref.Label = path.Base(in.name)
	if info.title != "" {
		o.Ref.Label = info.title
	}
	if in.lim.InlineMediaBytes > 0 && in.size <= in.lim.InlineMediaBytes {
		inline(&o, io.NewSectionReader(in.r, 0, in.size))
	}
	s.add(o)
	s.structure["format"] = info.format
	if info.duration > 0 {
		s.structure["duration"] = o.Metadata["duration"]
	}
	return nil
}

// readAtFull reads len(b) bytes at off, treating a short read as an error.
func readAtFull(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}
