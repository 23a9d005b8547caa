package extract

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"strings"
)

// Matroska element IDs the probe reads (IDs keep their length marker bits).
const (
	ebmlHeader      = 0x1a45dfa3
	ebmlDocType     = 0x4282
	mkvSegment      = 0x18538067
	mkvInfo         = 0x1549a966
	mkvTimecodeScal = 0x2ad7b1
	mkvDuration     = 0x4489
	mkvTitle        = 0x7ba9
	mkvTracks       = 0x1654ae6b
	mkvTrackEntry   = 0xae
	mkvTrackType    = 0x83
	mkvCodecID      = 0x86
	mkvVideo        = 0xe0
	mkvPixelWidth   = 0xb0
	mkvPixelHeight  = 0xba
	mkvAudio        = 0xe1
	mkvSampling     = 0xb5
	mkvChannels     = 0x9f
	mkvCluster      = 0x1f43b675
)

// ebmlVint reads a variable-length integer at off: the element ID (marker
// kept) or a size (marker removed; all ones means unknown).
func ebmlVint(r io.ReaderAt, off int64, keepMarker bool) (v uint64, n int, unknown bool, err error) {
	b := make([]byte, 8)
	if err := readAtFull(r, b[:1], off); err != nil {
		return 0, 0, false, err
	}
	n = 1
	for mask := byte(0x80); n <= 8 && b[0]&mask == 0; mask >>= 1 {
		n++
	}
	if n > 8 {
		return 0, 0, false, errors.New("bad EBML length")
	}
	if n > 1 {
		if err := readAtFull(r, b[1:n], off+1); err != nil {
			return 0, 0, false, err
		}
	}
	first := b[0]
	if !keepMarker {
		first &= byte(0xff >> n)
	}
	v = uint64(first)
	allOnes := first == byte(0xff>>n)
	for i := 1; i < n; i++ {
		v = v<<8 | uint64(b[i])
		allOnes = allOnes && b[i] == 0xff
	}
	return v, n, !keepMarker && allOnes, nil
}

// probeMatroska reads a WebM/Matroska file's header, segment info
// (duration, title) and tracks, stopping at the first cluster: the
// media data is never read.
func probeMatroska(r io.ReaderAt, size int64) (mediaInfo, error) {
	info := mediaInfo{format: "webm"}
	var (
		scale          uint64 = 1_000_000 // ns per timecode unit, the default
		duration       float64
		elems          int
		hasVideo       bool
		hasAudio       bool
		trackType      uint64
		track          mp4Track
		video, audio   *mp4Track
		sawInfo, sawTr bool
	)
	readUint := func(off, n int64) uint64 {
		if n > 8 {
			return 0
		}
		b := make([]byte, n)
		if readAtFull(r, b, off) != nil {
			return 0
		}
		var v uint64
		for _, c := range b {
			v = v<<8 | uint64(c)
		}
		return v
	}
	readFloat := func(off, n int64) float64 {
		b := make([]byte, n)
		if (n != 4 && n != 8) || readAtFull(r, b, off) != nil {
			return 0
		}
		if n == 4 {
			return float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
		}
		return math.Float64frombits(binary.BigEndian.Uint64(b))
	}
	readString := func(off, n int64) string {
		b := make([]byte, min(n, 256))
		if readAtFull(r, b, off) != nil {
			return ""
		}
		return strings.TrimRight(string(b), "\x00")
	}
	errStop := errors.New("stop")
	var walk func(off, end int64, depth int) error
	walk = func(off, end int64, depth int) error {
		for off < end {
			if elems++; elems > 20_000 {
				return errors.New("too many elements")
			}
			id, idn, _, err := ebmlVint(r, off, true)
			if err != nil {
				return err
			}
			n, sn, unknown, err := ebmlVint(r, off+int64(idn), false)
			if err != nil {
				return err
			}
			body := off + int64(idn) + int64(sn)
			if unknown || body+int64(n) > end || int64(n) < 0 {
				n = uint64(end - body)
			}
			next := body + int64(n)
			switch id {
			case ebmlHeader, mkvSegment, mkvTracks, mkvVideo, mkvAudio:
				if depth < 6 {
					if err := walk(body, next, depth+1); err != nil {
						return err
					}
				}
			case ebmlDocType:
				if s := readString(body, int64(n)); s != "" && s != "webm" {
					info.format = s
				}
			case mkvInfo:
				sawInfo = true
				if err := walk(body, next, depth+1); err != nil {
					return err
				}
			case mkvTimecodeScal:
				if v := readUint(body, int64(n)); v > 0 {
					scale = v
				}
			case mkvDuration:
				duration = readFloat(body, int64(n))
			case mkvTitle:
				info.title = readString(body, int64(n))
			case mkvTrackEntry:
				sawTr = true
				track, trackType = mp4Track{}, 0
				if err := walk(body, next, depth+1); err != nil {
					return err
				}
				t := track
				switch {
				case trackType == 1 && video == nil:
					hasVideo, video = true, &t
				case trackType == 2 && audio == nil:
					hasAudio, audio = true, &t
				}
			case mkvTrackType:
				trackType = readUint(body, int64(n))
			case mkvCodecID:
				track.codec = readString(body, int64(n))
			case mkvPixelWidth:
				track.width = int(readUint(body, int64(n)))
			case mkvPixelHeight:
				track.height = int(readUint(body, int64(n)))
			case mkvSampling:
				track.sampleRate = int(readFloat(body, int64(n)))
			case mkvChannels:
				track.channels = int(readUint(body, int64(n)))
			case mkvCluster:
				// Media data begins; info and tracks come before it.
				if sawInfo && sawTr {
					return errStop
				}
			}
			off = next
		}
		return nil
	}
	if err := walk(0, size, 0); err != nil && err != errStop && !sawInfo {
		return info, err
	}
	if !sawInfo && !sawTr {
		return info, errors.New("no segment info or tracks found")
	}
	info.duration = duration * float64(scale) / 1e9
	info.kind = contentVideo
	switch {
	case hasVideo:
		info.width, info.height, info.codec = video.width, video.height, video.codec
	case hasAudio:
		info.kind = contentAudio
		info.codec = audio.codec
	}
	if hasAudio {
		info.sampleRate, info.channels = audio.sampleRate, audio.channels
	}
	return info, nil
}
