package extract

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"unicode/utf16"
)

// mp3Frame is an MPEG audio frame header.
type mp3Frame struct {
	version    int // 1, 2, or 25 for MPEG 2.5
	layer      int
	bitrate    int // kbit/s
	sampleRate int
	mono       bool
}

// samples per frame, which the duration needs.
func (f mp3Frame) samples() int {
	switch {
	case f.layer == 1:
		return 384
	case f.layer == 3 && f.version != 1:
		return 576
	}
	return 1152
}

// mp3Bitrates[v1?][layer-1][index] in kbit/s.
var mp3Bitrates = [2][3][16]int{
	{ // MPEG 2 and 2.5
		{0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256, 0},
		{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0},
		{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0},
	},
	{ // MPEG 1
		{0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 0},
		{0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 0},
		{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0},
	},
}

var mp3SampleRates = [3]int{44100, 48000, 32000}

// parseMP3Header decodes a 4-byte frame header, rejecting the reserved
// values that make random bytes look like a frame.
func parseMP3Header(h []byte) (mp3Frame, bool) {
	if len(h) < 4 || h[0] != 0xff || h[1]&0xe0 != 0xe0 {
		return mp3Frame{}, false
	}
	var f mp3Frame
	switch (h[1] >> 3) & 3 {
	case 0:
		f.version = 25
	case 2:
		f.version = 2
	case 3:
		f.version = 1
	default:
		return f, false
	}
	layer := int((h[1] >> 1) & 3)
	if layer == 0 {
		return f, false
	}
	f.layer = 4 - layer
	bi, si := int(h[2]>>4), int((h[2]>>2)&3)
	if bi == 0 || bi == 15 || si == 3 {
		return f, false
	}
	v1 := 0
	if f.version == 1 {
		v1 = 1
	}
	f.bitrate = mp3Bitrates[v1][f.layer-1][bi]
	f.sampleRate = mp3SampleRates[si]
	switch f.version {
	case 2:
		f.sampleRate /= 2
	case 25:
		f.sampleRate /= 4
	}
	f.mono = h[3]>>6 == 3
	return f, true
}

// probeMP3 skips the ID3v2 tag, finds the first frame and takes the
// duration from its Xing/Info or VBRI header (variable bit rate), else from
// the stream's size and the frame's bit rate.
func probeMP3(r io.ReaderAt, size int64) (mediaInfo, error) {
	info := mediaInfo{kind: contentAudio, format: "mp3", codec: "mp3"}
	start := int64(0)
	head := make([]byte, 10)
	if readAtFull(r, head, 0) == nil && string(head[:3]) == "ID3" {
		n := int64(syncsafe(head[6:10]))
		tag := make([]byte, min(n, 64<<10, size-10))
		if readAtFull(r, tag, 10) == nil {
			info.title = id3Title(tag, int(head[3]))
		}
		start = 10 + n
		if head[5]&0x10 != 0 {
			start += 10
		}
	}
	// Look for the first frame within 64 KiB of the tag's end.
	win := make([]byte, max(0, min(64<<10, size-start)))
	n, _ := r.ReadAt(win, start)
	win = win[:n]
	at := -1
	var f mp3Frame
	for i := 0; i+4 <= len(win); i++ {
		if win[i] != 0xff {
			continue
		}
		if g, ok := parseMP3Header(win[i:]); ok {
			at, f = i, g
			break
		}
	}
	if at < 0 {
		return info, errors.New("no MPEG audio frame found")
	}
	info.sampleRate = f.sampleRate
	info.channels = 2
	if f.mono {
		info.channels = 1
	}
	frame := win[at:]
	// Xing/Info sits after the side information, whose size depends on
	// version and channels; VBRI at a fixed offset.
	side := 32
	switch {
	case f.version == 1 && f.mono, f.version != 1 && !f.mono:
		side = 17
	case f.version != 1 && f.mono:
		side = 9
	}
	if x := 4 + side; len(frame) >= x+12 && (string(frame[x:x+4]) == "Xing" || string(frame[x:x+4]) == "Info") {
		if binary.BigEndian.Uint32(frame[x+4:])&1 != 0 {
			frames := binary.BigEndian.Uint32(frame[x+8:])
			info.duration = float64(frames) * float64(f.samples()) / float64(f.sampleRate)
		}
	} else if len(frame) >= 36+18 && string(frame[36:40]) == "VBRI" {
		frames := binary.BigEndian.Uint32(frame[36+14:])
		info.duration = float64(frames) * float64(f.samples()) / float64(f.sampleRate)
	}
	if info.duration > 0 {
		audio := size - start - int64(at)
		info.bitrate = int(float64(audio) * 8 / info.duration)
		return info, nil
	}
	info.bitrate = f.bitrate * 1000
	audio := size - start - int64(at)
	tail := make([]byte, 3)
	if size >= 128 && readAtFull(r, tail, size-128) == nil && string(tail) == "TAG" {
		audio -= 128
	}
	if info.bitrate > 0 && audio > 0 {
		info.duration = float64(audio) * 8 / float64(info.bitrate)
	}
	return info, nil
}

func syncsafe(b []byte) uint32 {
	return uint32(b[0]&0x7f)<<21 | uint32(b[1]&0x7f)<<14 | uint32(b[2]&0x7f)<<7 | uint32(b[3]&0x7f)
}

// id3Title finds the TIT2 (title) frame of an ID3v2.3/2.4 tag.
func id3Title(tag []byte, version int) string {
	for off := 0; off+10 <= len(tag) && tag[off] != 0; {
		id := string(tag[off : off+4])
		n := int(binary.BigEndian.Uint32(tag[off+4:]))
		if version >= 4 {
			n = int(syncsafe(tag[off+4 : off+8]))
		}
		body := tag[off+10:]
		if n < 0 || n > len(body) {
			return ""
		}
		if id == "TIT2" && n > 1 {
			return id3Text(body[:n])
		}
		off += 10 + n
	}
	return ""
}

// id3Text decodes a text frame: an encoding byte, then the text.
func id3Text(b []byte) string {
	enc, b := b[0], b[1:]
	var s string
	switch enc {
	case 0: // ISO-8859-1
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		s = string(r)
	case 1, 2: // UTF-16 with BOM, UTF-16BE
		be := enc == 2
		if len(b) >= 2 && b[0] == 0xfe && b[1] == 0xff {
			be, b = true, b[2:]
		} else if len(b) >= 2 && b[0] == 0xff && b[1] == 0xfe {
			be, b = false, b[2:]
		}
		u := make([]uint16, len(b)/2)
		for i := range u {
			if be {
				u[i] = binary.BigEndian.Uint16(b[2*i:])
			} else {
				u[i] = binary.LittleEndian.Uint16(b[2*i:])
			}
		}
		s = string(utf16.Decode(u))
	default:
		s = string(bytes.ToValidUTF8(b, nil))
	}
	return strings.TrimSpace(strings.TrimRight(s, "\x00"))
}
