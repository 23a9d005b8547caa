package extract

import (
	"encoding/binary"
	"errors"
	"io"
	"strings"
)

// mp4Containers are the boxes whose children the probe walks; media data
// (mdat) and everything else is skipped by its size, never read.
var mp4Containers = map[string]bool{
	"moov": true, "trak": true, "mdia": true, "minf": true, "stbl": true,
}

// mp4Track collects one track's facts while walking its boxes.
type mp4Track struct {
	handler       string
	width, height int
	codec         string
	sampleRate    int
	channels      int
}

// probeMP4 reads an ISO-BMFF file (MP4, M4A, MOV): duration from mvhd,
// tracks' handlers, codecs and dimensions from trak boxes. It reads box
// headers only, bounded in number and depth.
func probeMP4(r io.ReaderAt, size int64) (mediaInfo, error) {
	info := mediaInfo{format: "mp4"}
	var (
		tracks []*mp4Track
		cur    *mp4Track
		boxes  int
		brand  string
	)
	var walk func(off, end int64, depth int) error
	walk = func(off, end int64, depth int) error {
		for off+8 <= end {
			if boxes++; boxes > 10_000 {
				return errors.New("too many boxes")
			}
			h := make([]byte, 16)
			if err := readAtFull(r, h[:8], off); err != nil {
				return err
			}
			n, typ, hdr := int64(binary.BigEndian.Uint32(h)), string(h[4:8]), int64(8)
			switch n {
			case 0: // to the end of the file
				n = end - off
			case 1: // 64-bit size follows
				if err := readAtFull(r, h[8:16], off+8); err != nil {
					return err
				}
				n, hdr = int64(binary.BigEndian.Uint64(h[8:])), 16
			}
			if n < hdr || off+n > end {
				// A truncated last box: keep what was read.
				n = end - off
				if n < hdr {
					return nil
				}
			}
			body := off + hdr
			switch {
			case typ == "ftyp":
				b := make([]byte, 4)
				if readAtFull(r, b, body) == nil {
					brand = strings.TrimSpace(string(b))
				}
			case typ == "trak":
				cur = &mp4Track{}
				tracks = append(tracks, cur)
				if err := walk(body, off+n, depth+1); err != nil {
					return err
				}
				cur = nil
			case mp4Containers[typ] && depth < 8:
				if err := walk(body, off+n, depth+1); err != nil {
					return err
				}
			case typ == "mvhd":
				if d, ok := mp4Duration(r, body); ok {
					info.duration = d
				}
			case typ == "tkhd" && cur != nil:
				// Width and height are the last 8 bytes, 16.16 fixed point.
				b := make([]byte, 8)
				if n-hdr >= 84 && readAtFull(r, b, off+n-8) == nil {
					cur.width, cur.height = int(binary.BigEndian.Uint32(b)>>16), int(binary.BigEndian.Uint32(b[4:])>>16)
				}
			case typ == "hdlr" && cur != nil:
				b := make([]byte, 4)
				if readAtFull(r, b, body+8) == nil {
					cur.handler = string(b)
				}
			case typ == "stsd" && cur != nil:
				// The first sample entry: size, codec fourcc, and for audio
				// the channel count and rate at fixed offsets.
				b := make([]byte, 8+8+28)
				if readAtFull(r, b, body+8) == nil {
					cur.codec = strings.TrimSpace(string(b[4:8]))
					if cur.handler == "soun" {
						cur.channels = int(binary.BigEndian.Uint16(b[8+16:]))
						cur.sampleRate = int(binary.BigEndian.Uint32(b[8+24:]) >> 16)
					}
				}
			}
			off += n
		}
		return nil
	}
	if err := walk(0, size, 0); err != nil && len(tracks) == 0 && info.duration == 0 {
		return info, err
	}
	info.kind = contentVideo
	var video, audio *mp4Track
	for _, t := range tracks {
		switch {
		case t.handler == "vide" && video == nil:
			video = t
		case t.handler == "soun" && audio == nil:
			audio = t
		}
	}
	switch {
	case video != nil:
		info.width, info.height, info.codec = video.width, video.height, video.codec
	case audio != nil:
		info.kind = contentAudio
	case strings.HasPrefix(brand, "M4A") || strings.HasPrefix(brand, "M4B"):
		info.kind = contentAudio
	}
	if audio != nil {
		info.sampleRate, info.channels = audio.sampleRate, audio.channels
		if video == nil {
			info.codec = audio.codec
		}
	}
	if len(tracks) == 0 && info.duration == 0 {
		return info, errors.New("no movie header (moov) found")
	}
	return info, nil
}

// mp4Duration reads an mvhd box: version 0 has 32-bit times, version 1
// 64-bit ones.
func mp4Duration(r io.ReaderAt, body int64) (float64, bool) {
	b := make([]byte, 32)
	if readAtFull(r, b[:1], body) != nil {
		return 0, false
	}
	var scale, dur uint64
	if b[0] == 1 {
		if readAtFull(r, b[:32], body) != nil {
			return 0, false
		}
		scale, dur = uint64(binary.BigEndian.Uint32(b[20:])), binary.BigEndian.Uint64(b[24:])
	} else {
		if readAtFull(r, b[:20], body) != nil {
			return 0, false
		}
		scale, dur = uint64(binary.BigEndian.Uint32(b[12:])), uint64(binary.BigEndian.Uint32(b[16:]))
	}
	if scale == 0 || dur == 0 || dur == 0xffffffff || dur == 1<<64-1 {
		return 0, false
	}
	return float64(dur) / float64(scale), true
}
