package extract

import (
	"archive/zip"
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
)

// isoFormats are the codes dates and times are rendered with: ISO 8601,
// whatever the workbook's own format (m/d/yy prints 1917 and 2017 alike).
const (
	isoDate     = "yyyy-mm-dd"
	isoDateTime = "yyyy-mm-dd hh:mm:ss"
)

// builtinDateFormats are the built-in number formats that show a date
// (SpreadsheetML 18.8.30), with the ISO code that replaces each.
var builtinDateFormats = map[int]string{
	14: isoDate, 15: isoDate, 16: isoDate, 17: isoDate, 22: isoDateTime,
	27: isoDate, 28: isoDate, 29: isoDate, 30: isoDate, 31: isoDate, 36: isoDate,
	50: isoDate, 51: isoDate, 52: isoDate, 53: isoDate, 54: isoDate, 55: isoDate,
	56: isoDate, 57: isoDate, 58: isoDate,
}

var (
	numFmtElem  = regexp.MustCompile(`<(?:\w+:)?numFmt\b[^>]*>`)
	numFmtsOpen = regexp.MustCompile(`<(\w+:)?numFmts\b[^>]*?(/?)>`)
	sheetOpen   = regexp.MustCompile(`<(\w+:)?styleSheet\b[^>]*>`)
	attrValue   = func(name string) *regexp.Regexp { return regexp.MustCompile(`\b` + name + `="([^"]*)"`) }
	numFmtIDRe  = attrValue("numFmtId")
	formatRe    = attrValue("formatCode")
)

// isoDateStyles rewrites a styles part so that every date format (custom
// or built-in) is an ISO one: custom formats' codes are replaced, built-in
// date ids are defined anew (a workbook's own definition of a built-in id
// wins over the built-in one). It returns the part unchanged when it has no
// numFmts to touch and cannot take new ones.
func isoDateStyles(styles []byte) []byte {
	s := string(styles)
	defined := map[int]bool{}
	s = numFmtElem.ReplaceAllStringFunc(s, func(e string) string {
		idm, cm := numFmtIDRe.FindStringSubmatch(e), formatRe.FindStringSubmatch(e)
		if idm == nil || cm == nil {
			return e
		}
		id, _ := strconv.Atoi(idm[1])
		defined[id] = true
		code := html.UnescapeString(cm[1])
		var iso string
		switch numFmtKind(0, code) {
		case "date":
			iso = isoDate
		case "datetime":
			iso = isoDateTime
		default:
			return e
		}
		return strings.Replace(e, cm[0], `formatCode="`+iso+`"`, 1)
	})
	var add strings.Builder
	prefix := ""
	if m := numFmtsOpen.FindStringSubmatch(s); m != nil {
		prefix = m[1]
	} else if m := sheetOpen.FindStringSubmatch(s); m != nil {
		prefix = m[1]
	}
	for id := 14; id <= 58; id++ {
		if iso, ok := builtinDateFormats[id]; ok && !defined[id] {
			fmt.Fprintf(&add, `<%snumFmt numFmtId="%d" formatCode="%s"/>`, prefix, id, iso)
		}
	}
	if loc := numFmtsOpen.FindStringSubmatchIndex(s); loc != nil {
		if loc[5] > loc[4] { // <numFmts/>: empty, opened and closed at once
			return []byte(s[:loc[0]] + "<" + prefix + "numFmts>" + add.String() + "</" + prefix + "numFmts>" + s[loc[1]:])
		}
		return []byte(s[:loc[1]] + add.String() + s[loc[1]:])
	}
	if loc := sheetOpen.FindStringIndex(s); loc != nil {
		return []byte(s[:loc[1]] + "<" + prefix + "numFmts>" + add.String() + "</" + prefix + "numFmts>" + s[loc[1]:])
	}
	return styles
}

// withISODates returns the package's bytes with its styles part rewritten
// by isoDateStyles: the other parts are copied as they are stored, not
// expanded. ok is false when the package has no styles part.
func withISODates(p *pkg, size int64) (out []byte, ok bool, err error) {
	var styles *zip.File
	for _, f := range p.zr.File {
		if partKey(f.Name) == "xl/styles.xml" {
			styles = f
			break
		}
	}
	if styles == nil {
		return nil, false, nil
	}
	b, err := p.readAll(styles.Name)
	if err != nil {
		return nil, false, err
	}
	var buf bytes.Buffer
	buf.Grow(int(min(size, p.lim.MaxPartBytes)) + 4096)
	zw := zip.NewWriter(&buf)
	for _, f := range p.zr.File {
		if f == styles {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate})
			if err != nil {
				return nil, false, err
			}
			if _, err := w.Write(isoDateStyles(b)); err != nil {
				return nil, false, err
			}
			continue
		}
		if err := zw.Copy(f); err != nil {
			return nil, false, fmt.Errorf("%w: copying part %s: %w", ErrMalformed, f.Name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, false, err
	}
	return buf.Bytes(), true, nil
}
