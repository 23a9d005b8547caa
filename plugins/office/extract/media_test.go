package extract

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/gif"
	"image/jpeg"
	"math"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"github.com/agenthost/agenthost/pdk/content"
)

// wavOf builds a PCM WAVE file of the given length.
func wavOf(rate, channels, bits int, seconds float64) []byte {
	blockAlign := channels * bits / 8
	data := int(float64(rate)*seconds) * blockAlign
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + data))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(uint16(1))
	le(uint16(channels))
	le(uint32(rate))
	le(uint32(rate * blockAlign))
	le(uint16(blockAlign))
	le(uint16(bits))
	b.WriteString("LIST")
	le(uint32(4))
	b.WriteString("INFO")
	b.WriteString("data")
	le(uint32(data))
	b.Write(make([]byte, data))
	return b.Bytes()
}

// mp3Of builds an MP3 of constant bit rate (MPEG-1 Layer III, 128 kbit/s,
// 44.1 kHz, 417-byte frames) behind an ID3v2 tag with a title.
func mp3Of(frames int, title string) []byte {
	var b bytes.Buffer
	frame := append([]byte("TIT2"), 0, 0, 0, byte(len(title)+1), 0, 0, 0)
	frame = append(frame, title...)
	b.WriteString("ID3\x03\x00\x00")
	n := len(frame)
	b.Write([]byte{byte(n >> 21 & 0x7f), byte(n >> 14 & 0x7f), byte(n >> 7 & 0x7f), byte(n & 0x7f)})
	b.Write(frame)
	for range frames {
		f := make([]byte, 417)
		copy(f, []byte{0xff, 0xfb, 0x90, 0x00})
		b.Write(f)
	}
	return b.Bytes()
}

func box(typ string, body ...[]byte) []byte {
	b := bytes.Join(body, nil)
	out := binary.BigEndian.AppendUint32(nil, uint32(8+len(b)))
	return append(append(out, typ...), b...)
}

func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// mp4Of builds an ISO-BMFF file: ftyp, a large mdat first (as a camera
// writes it), then moov with mvhd and one track of the handler.
func mp4Of(brand, handler string, timescale, duration uint32, w, h int) []byte {
	mvhd := box("mvhd", u32(0), u32(0), u32(0), u32(timescale), u32(duration), make([]byte, 80))
	tkhd := box("tkhd", make([]byte, 76), u32(uint32(w)<<16), u32(uint32(h)<<16))
	hdlr := box("hdlr", u32(0), u32(0), []byte(handler), make([]byte, 12))
	entry := append(u32(8+8+28), []byte("avc1")...)
	entry = append(entry, make([]byte, 8+28-8)...)
	if handler == "soun" {
		entry = append(u32(8+8+28), []byte("mp4a")...)
		entry = append(entry, make([]byte, 8)...)                 // reserved, data ref
		entry = append(entry, make([]byte, 8)...)                 // version, revision, vendor
		entry = append(entry, 0, 2, 0, 16, 0, 0, 0, 0)            // channels, sample size, …
		entry = append(entry, u32(48000<<16)...)                  // sample rate 16.16
		entry = append(entry, make([]byte, 8+8+28-len(entry))...) // pad
	}
	stsd := box("stsd", u32(0), u32(1), entry)
	trak := box("trak", tkhd, box("mdia", hdlr, box("minf", box("stbl", stsd))))
	return bytes.Join([][]byte{
		box("ftyp", []byte(brand), u32(0)),
		box("mdat", make([]byte, 100_000)),
		box("moov", mvhd, trak),
	}, nil)
}

// ebml writes an EBML element: ID bytes, an 8-byte size, the body.
func ebml(id []byte, body ...[]byte) []byte {
	b := bytes.Join(body, nil)
	size := append([]byte{0x01}, make([]byte, 7)...)
	binary.BigEndian.PutUint64(size, uint64(len(b))|1<<56)
	return append(append(append([]byte{}, id...), size...), b...)
}

// webmOf builds a WebM with segment info (duration in ms at the default
// timecode scale) and one video track, then a cluster.
func webmOf(ms float64, w, h int) []byte {
	dur := make([]byte, 8)
	binary.BigEndian.PutUint64(dur, math.Float64bits(ms))
	return bytes.Join([][]byte{
		ebml([]byte{0x1a, 0x45, 0xdf, 0xa3}, ebml([]byte{0x42, 0x82}, []byte("webm"))),
		ebml([]byte{0x18, 0x53, 0x80, 0x67},
			ebml([]byte{0x15, 0x49, 0xa9, 0x66}, ebml([]byte{0x2a, 0xd7, 0xb1}, []byte{0x0f, 0x42, 0x40}), ebml([]byte{0x44, 0x89}, dur)),
			ebml([]byte{0x16, 0x54, 0xae, 0x6b}, ebml([]byte{0xae},
				ebml([]byte{0x83}, []byte{1}), ebml([]byte{0x86}, []byte("V_VP9")),
				ebml([]byte{0xe0}, ebml([]byte{0xb0}, []byte{byte(w >> 8), byte(w)}), ebml([]byte{0xba}, []byte{byte(h >> 8), byte(h)})))),
			ebml([]byte{0x1f, 0x43, 0xb6, 0x75}, make([]byte, 1000)),
		),
	}, nil)
}

// webpOf builds a lossless WebP header (VP8L) of the size.
func webpOf(w, h int) []byte {
	bits := uint32(w-1) | uint32(h-1)<<14
	vp8l := append([]byte{0x2f}, binary.LittleEndian.AppendUint32(nil, bits)...)
	vp8l = append(vp8l, make([]byte, 8)...)
	chunk := append([]byte("VP8L"), binary.LittleEndian.AppendUint32(nil, uint32(len(vp8l)))...)
	chunk = append(chunk, vp8l...)
	out := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(4+len(chunk)))...)
	return append(append(out, "WEBP"...), chunk...)
}

func TestImages(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 7, 5))
	enc := func(f func(*bytes.Buffer) error) []byte {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	cases := []struct {
		name, mime string
		data       []byte
		format     string
	}{
		{"a.png", "image/png", []byte(pngOf(t, 7, 5)), "png"},
		{"a.jpg", "", enc(func(b *bytes.Buffer) error { return jpeg.Encode(b, img, nil) }), "jpeg"},
		{"a.gif", "image/gif", enc(func(b *bytes.Buffer) error { return gif.Encode(b, img, nil) }), "gif"},
		{"a.webp", "", webpOf(7, 5), "webp"},
		{"a.bmp", "", enc(func(b *bytes.Buffer) error { return bmp.Encode(b, img) }), "bmp"},
		{"a.tiff", "", enc(func(b *bytes.Buffer) error { return tiff.Encode(b, img, nil) }), "tiff"},
		{"noext", "application/octet-stream", []byte(pngOf(t, 7, 5)), "png"}, // sniffed
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			idx, objs := mustRun(t, c.data, c.name, c.mime, Limits{})
			if len(objs) != 1 {
				t.Fatalf("%d objects", len(objs))
			}
			o := objs[0]
			if o.ContentType != content.Image || o.Metadata["format"] != c.format || o.Metadata["dimensions"] != "7x5" || o.Metadata["encoding"] != "file" {
				t.Errorf("object %+v", o)
			}
			if idx.Objects[0].Dimensions != "7x5" || idx.MIMEType != "image/"+c.format {
				t.Errorf("index %+v", idx)
			}
		})
	}
	t.Run("inline", func(t *testing.T) {
		_, objs := mustRun(t, []byte(pngOf(t, 2, 2)), "x.png", "", Limits{InlineMediaBytes: 1 << 20})
		if objs[0].Metadata["encoding"] != "base64" || objs[0].Data == "" {
			t.Errorf("not inlined: %v", objs[0].Metadata)
		}
	})
	t.Run("broken", func(t *testing.T) {
		_, _, err := run(t, []byte("\x89PNG\r\n\x1a\nnot really"), "x.png", "", Limits{})
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("err %v", err)
		}
	})
}

func TestMedia(t *testing.T) {
	cases := []struct {
		name     string
		data     []byte
		kind     content.Type
		duration float64
		dims     string
		check    func(t *testing.T, md map[string]any)
	}{
		{"a.wav", wavOf(8000, 2, 16, 2.5), content.AudioStream, 2.5, "", func(t *testing.T, md map[string]any) {
			if md["sampleRate"] != 8000 || md["channels"] != 2 || md["codec"] != "pcm" {
				t.Errorf("wav %v", md)
			}
		}},
		// Constant bit rate: duration = audio bytes × 8 / bit rate.
		{"a.mp3", mp3Of(100, "A song"), content.AudioStream, 100 * 417 * 8 / 128000.0, "", func(t *testing.T, md map[string]any) {
			if md["title"] != "A song" || md["sampleRate"] != 44100 || md["bitrate"] != 128000 {
				t.Errorf("mp3 %v", md)
			}
		}},
		{"a.mp4", mp4Of("isom", "vide", 600, 4500, 640, 360), content.VideoStream, 7.5, "640x360", nil},
		{"a.m4a", mp4Of("M4A ", "soun", 1000, 61234, 0, 0), content.AudioStream, 61.234, "", func(t *testing.T, md map[string]any) {
			if md["sampleRate"] != 48000 || md["channels"] != 2 || md["codec"] != "mp4a" {
				t.Errorf("m4a %v", md)
			}
		}},
		{"a.webm", webmOf(2500, 320, 240), content.VideoStream, 2.5, "320x240", func(t *testing.T, md map[string]any) {
			if md["codec"] != "V_VP9" {
				t.Errorf("webm %v", md)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			idx, objs := mustRun(t, c.data, c.name, "", Limits{})
			if len(objs) != 1 {
				t.Fatalf("%d objects", len(objs))
			}
			o := objs[0]
			if o.ContentType != c.kind {
				t.Errorf("kind %s, want %s", o.ContentType, c.kind)
			}
			if d, _ := o.Metadata["duration"].(float64); math.Abs(d-c.duration) > 0.002 {
				t.Errorf("duration %v, want %v", o.Metadata["duration"], c.duration)
			}
			if idx.Objects[0].Duration == 0 {
				t.Errorf("index summary has no duration: %+v", idx.Objects[0])
			}
			if c.dims != "" && o.Metadata["dimensions"] != c.dims {
				t.Errorf("dimensions %v, want %s", o.Metadata["dimensions"], c.dims)
			}
			if c.check != nil {
				c.check(t, o.Metadata)
			}
			// A sniffed input without name or type gets the same answer.
			_, objs2 := mustRun(t, c.data, "", "", Limits{})
			if objs2[0].ContentType != c.kind {
				t.Errorf("sniffed as %s", objs2[0].ContentType)
			}
		})
	}
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"cut.wav", []byte("RIFF\x00\x00\x00\x00WAVE")},
		{"cut.mp4", []byte("\x00\x00\x00\x10ftypisom\x00\x00\x00\x00")},
		{"junk.mp3", bytes.Repeat([]byte{0x12}, 1000)},
		{"junk.webm", []byte{0x1a, 0x45, 0xdf, 0xa3, 0xff}},
	} {
		if _, _, err := run(t, c.data, c.name, "", Limits{}); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err %v, want ErrMalformed", c.name, err)
		}
	}
}
