package wasmbin

import "fmt"

// Import kinds of the import section.
const (
	ImportFunc   byte = 0
	ImportTable  byte = 1
	ImportMemory byte = 2
	ImportGlobal byte = 3
)

// ImportEntry is one entry of a module's import section.
type ImportEntry struct {
	Module, Name string
	Kind         byte
}

// Imports lists a module's imports without compiling it.
func Imports(module []byte) ([]ImportEntry, error) {
	secs, err := Parse(module)
	if err != nil {
		return nil, err
	}
	for _, s := range secs {
		if s.ID != SecImport {
			continue
		}
		r := NewReader(s.Payload)
		n, err := r.U32()
		if err != nil {
			return nil, err
		}
		if int(n) > r.Len() {
			return nil, fmt.Errorf("%w: %d imports in %d bytes", ErrMalformed, n, r.Len())
		}
		out := make([]ImportEntry, 0, n)
		for i := uint32(0); i < n; i++ {
			var e ImportEntry
			if e.Module, err = r.Name(); err != nil {
				return nil, err
			}
			if e.Name, err = r.Name(); err != nil {
				return nil, err
			}
			if e.Kind, err = r.Byte(); err != nil {
				return nil, err
			}
			if err := skipImportDesc(r, e.Kind); err != nil {
				return nil, fmt.Errorf("import %s.%s: %w", e.Module, e.Name, err)
			}
			out = append(out, e)
		}
		return out, nil
	}
	return nil, nil
}

func skipImportDesc(r *Reader, kind byte) error {
	limits := func() error {
		flag, err := r.Byte()
		if err != nil {
			return err
		}
		if _, err := r.U64(); err != nil {
			return err
		}
		if flag&1 != 0 {
			_, err = r.U64()
		}
		return err
	}
	switch kind {
	case ImportFunc:
		_, err := r.U32()
		return err
	case ImportTable:
		if _, err := r.Byte(); err != nil {
			return err
		}
		return limits()
	case ImportMemory:
		return limits()
	case ImportGlobal:
		_, err := r.Bytes(2)
		return err
	default:
		return fmt.Errorf("%w: unknown import kind %d", ErrMalformed, kind)
	}
}
