package archive

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/nwaples/rardecode/v2"
)

// maxRarDict bounds the dictionary a RAR file may ask the decoder to
// allocate (RAR 5's default is 32 MiB; RAR 7 allows up to 64 GiB).
const maxRarDict = 128 << 20

// rarOptions are the decoder's options: a bounded dictionary.
func rarOptions(password string) []rardecode.Option {
	opts := []rardecode.Option{rardecode.MaxDictionarySize(maxRarDict)}
	if password != "" {
		opts = append(opts, rardecode.Password(password))
	}
	return opts
}

// openRar resolves a RAR (4 or 5) member. RAR is read as a stream, like a
// compressed tar: in one pass during the walk, members streaming live; Open
// reads the archive again from its start up to the member. A volume of a
// multi-volume set is read as far as it goes (see rarVolume).
func (w *walker) openRar(m member) {
	var r io.Reader
	var lead []byte
	if m.src.ra != nil {
		lead = make([]byte, min(m.src.size, rarVolumeHeadSize))
		if err := readAt(m.src.ra, lead, 0); err != nil {
			w.stop(m.path, problemKind(err), "", "not a readable RAR archive: "+err.Error())
			return
		}
		r = io.NewSectionReader(m.src.ra, 0, m.src.size)
	} else {
		s, done, err := w.stream(m.src)
		if err != nil {
			w.note(m.path, problemKind(err), "not opened: "+err.Error())
			return
		}
		if done != nil {
			defer done()
		}
		br := bufio.NewReaderSize(s, rarVolumeHeadSize)
		lead, _ = br.Peek(rarVolumeHeadSize) // a shorter archive gives what it has
		r = br
	}
	vol := sniffRarVolume(lead)
	if vol.later {
		w.stop(m.path, ProblemUnsupported, "", vol.describe()+
			": a set is read from its first volume, and the volumes before this one are not part of this upload, so nothing in it was read")
		return
	}
	rr, err := guard(func() (*rardecode.Reader, error) { return rardecode.NewReader(r, rarOptions(w.password)...) })
	if err != nil {
		err = rarError(err)
		w.stop(m.path, problemKind(err), "", "not a readable RAR archive: "+err.Error())
		return
	}
	reopen := m.src.open
	sc := newScope()
	for i := 0; !w.stopped(); i++ {
		hdr, err := guard(rr.Next)
		switch {
		case err == io.EOF:
			return
		case err != nil && w.stopped():
			return
		case err != nil && vol.multi:
			// A volume ends mid-set; the decoder's complaint (often "bad
			// block header") is about bytes that are in the next volume.
			w.stop(m.path, ProblemUnsupported, "", fmt.Sprintf("%s ends after %d entries: the rest of the set is in volumes that are not part of this upload; the entries wholly in this volume are kept (decoder: %v)",
				vol.describe(), i, err))
			return
		case err != nil:
			err = rarError(err)
			w.stop(m.path, problemKind(err), "", fmt.Sprintf("reading stopped after %d entries: %v; the entries before are kept", i, err))
			return
		}
		w.rarMember(m, sc, rr, hdr, i, reopen)
	}
}

func (w *walker) rarMember(c member, sc *scope, rr *rardecode.Reader, hdr *rardecode.FileHeader, index int, reopen func() (io.ReadCloser, error)) {
	name, dir, kind, reason := cleanName(hdr.Name)
	if kind != "" {
		w.problem(c.path+"/"+display(hdr.Name), kind, reason)
		return
	}
	p := c.path + "/" + name
	mode := hdr.Mode()
	dir = dir || hdr.IsDir
	if link, ok := sc.under(name); ok {
		w.problem(p, ProblemSymlink, fmt.Sprintf("inside %q, which is a link: links are not followed", link))
		return
	}
	switch {
	case mode&fs.ModeSymlink != 0 || hdr.LinkType != rardecode.LinkTypeNone:
		sc.link(name)
		target := ""
		if hdr.LinkTarget != "" {
			target = fmt.Sprintf(" to %q", display(hdr.LinkTarget))
		}
		w.problem(p, ProblemSymlink, "link"+target+": links are not followed")
		return
	case mode&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0:
		w.problem(p, ProblemSpecial, "a device, FIFO or socket entry")
		return
	}
	if !w.claim(sc, c, p, name, dir) {
		return
	}
	size := hdr.UnPackedSize
	switch {
	case hdr.Encrypted && w.password == "":
		w.problem(p, ProblemEncrypted, "encrypted: the contents cannot be read without the password")
		return
	case hdr.UnKnownSize || size < 0:
		w.problem(p, ProblemUnsupported, "the entry does not declare its size")
		return
	case size > w.lim.MaxFileBytes:
		w.problem(p, ProblemLimit, fmt.Sprintf("declares %d bytes, more than the per-file limit of %d", size, w.lim.MaxFileBytes))
		return
	case w.lim.bomb(size, hdr.PackedSize):
		w.problem(p, ProblemBomb, fmt.Sprintf("declares %d bytes from %d compressed (%.0f:1, more than %g:1): not expanded",
			size, hdr.PackedSize, float64(size)/float64(max(hdr.PackedSize, 1)), w.lim.MaxRatio))
		return
	}
	src := source{size: size, live: &exact{r: guarded{rr, rarError}, left: size}, open: reopenRarMember(reopen, index, hdr.Name, size, w.password)}
	w.visit(member{path: p, name: baseName(name), depth: c.depth + 1, extracted: true, src: src})
}

// reopenRarMember reads the archive from its start to the member at index:
// the cost of Open on a RAR member.
func reopenRarMember(open func() (io.ReadCloser, error), index int, name string, size int64, password string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		rc, err := open()
		if err != nil {
			return nil, err
		}
		rr, err := guard(func() (*rardecode.Reader, error) { return rardecode.NewReader(rc, rarOptions(password)...) })
		if err != nil {
			rc.Close()
			return nil, rarError(err)
		}
		for j := 0; ; j++ {
			hdr, err := guard(rr.Next)
			if err != nil {
				rc.Close()
				if err == io.EOF {
					err = fmt.Errorf("%w: the archive ends before entry %d", ErrTruncated, index)
				}
				return nil, rarError(err)
			}
			if j < index {
				continue
			}
			if hdr.Name != name {
				rc.Close()
				return nil, fmt.Errorf("%w: entry %d is now %q, not %q", ErrCorrupt, index, display(hdr.Name), display(name))
			}
			return readCloser{&exact{r: guarded{rr, rarError}, left: size}, rc.Close}, nil
		}
	}
}

func rarError(err error) error {
	switch {
	case err == nil, err == io.EOF:
		return err
	case errors.Is(err, rardecode.ErrArchiveEncrypted), errors.Is(err, rardecode.ErrArchivedFileEncrypted),
		errors.Is(err, rardecode.ErrBadPassword):
		return fmt.Errorf("%w: the contents cannot be read without the password (%w)", ErrEncrypted, err)
	case errors.Is(err, rardecode.ErrDictionaryTooLarge):
		return fmt.Errorf("%w: the entry needs a decoding dictionary larger than %d MiB (%w)", ErrLimit, maxRarDict>>20, err)
	case errors.Is(err, rardecode.ErrMultiVolume):
		return fmt.Errorf("%w: a multi-volume archive continues in a volume that is not here (%w)", ErrUnsupported, err)
	case errors.Is(err, rardecode.ErrUnsupportedDecoder), errors.Is(err, rardecode.ErrUnknownDecoder),
		errors.Is(err, rardecode.ErrUnknownVersion), errors.Is(err, rardecode.ErrUnknownEncryptMethod):
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	case errors.Is(err, rardecode.ErrUnexpectedArcEnd), errors.Is(err, rardecode.ErrShortFile):
		return fmt.Errorf("%w: %w", ErrTruncated, err)
	case strings.HasPrefix(err.Error(), "rardecode:"):
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return streamError(err)
}
