// Package settings is the one list of agenthost's settings: every flag,
// environment variable and configuration-file key the commands read, with
// its type, default and the line of documentation docs/configuration.md is
// generated from. It also holds the strict readers: a value that does not
// parse as its type is an error naming the setting and the value, never a
// silent fall back to the default (an AGENTHOST_COOKIE_SECURE=yes that left
// the session cookie without Secure is why).
package settings

//go:generate go run ./gendoc -o ../../docs/configuration.md

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/money"
)

// Kind is how a setting's text is read.
type Kind int

const (
	// String is taken as written.
	String Kind = iota
	// Bool accepts exactly what strconv.ParseBool accepts.
	Bool
	// Int is a decimal integer (strconv.ParseInt, base 10).
	Int
	// Duration is a Go duration ("30s", "1h30m"; time.ParseDuration).
	Duration
	// Size is a number of bytes: a plain integer, or one with a unit
	// (B, KB, MB, GB, TB: powers of 1000; KiB, MiB, GiB, TiB: powers of 1024).
	Size
	// Money is a decimal amount of CHF ("0.10"; money.Parse).
	Money
	// List is comma-separated text.
	List
)

// String names the kind as docs/configuration.md shows it.
func (k Kind) String() string {
	switch k {
	case Bool:
		return "bool"
	case Int:
		return "integer"
	case Duration:
		return "duration"
	case Size:
		return "size"
	case Money:
		return "CHF"
	case List:
		return "list"
	default:
		return "text"
	}
}

// Setting is one thing an operator can set. At least one of Flag, Env and
// File is given.
type Setting struct {
	// Flag is the command-line flag without its dash ("addr"); "" when none.
	Flag string
	// Env is the environment variable ("AGENTHOST_ADDR"); "" when none.
	Env string
	// File is the key path in the configuration file ("objectStorage.bucket");
	// "" when none.
	File string
	// Kind is how its text is read.
	Kind Kind
	// Default is the value when nothing sets it, as text ("" when none).
	Default string
	// Commands are the commands that read it ("serve worker").
	Commands string
	// Doc is the line of documentation (Markdown).
	Doc string
	// Secret marks a value never printed (agenthost config masks it).
	Secret bool
}

// Name is how errors and agenthost config name the setting: its variable,
// else its flag, else its file key.
func (s Setting) Name() string {
	switch {
	case s.Env != "":
		return s.Env
	case s.Flag != "":
		return "-" + s.Flag
	default:
		return s.File
	}
}

// ErrValue is wrapped by every error about a value that does not parse.
var ErrValue = errors.New("unreadable value")

// Check parses v as the setting's kind; the error names the setting and
// the value.
func (s Setting) Check(v string) error {
	if err := s.Kind.check(v); err != nil {
		shown := strconv.Quote(v)
		if s.Secret {
			shown = "(secret, not shown)"
		}
		return fmt.Errorf("%s=%s: %w: %v", s.Name(), shown, ErrValue, err)
	}
	return nil
}

func (k Kind) check(v string) error {
	var err error
	switch k {
	case Bool:
		_, err = strconv.ParseBool(v)
		if err != nil {
			return errors.New("not a boolean (1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False)")
		}
	case Int:
		_, err = strconv.ParseInt(v, 10, 64)
		if err != nil {
			return errors.New("not a decimal integer")
		}
	case Duration:
		_, err = time.ParseDuration(v)
		if err != nil {
			return errors.New(`not a duration ("30s", "10m", "1h30m")`)
		}
	case Size:
		_, err = ParseSize(v)
	case Money:
		_, err = money.Parse(v)
		if err != nil {
			return errors.New(`not a decimal amount of CHF ("0.10")`)
		}
	}
	return err
}

var sizeUnits = []struct {
	suffix string
	factor int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

// ParseSize reads a number of bytes: an integer, optionally followed (with
// or without a space) by one of the units B, KB, MB, GB, TB (powers of 1000)
// or KiB, MiB, GiB, TiB (powers of 1024). Anything else is an error.
func ParseSize(v string) (int64, error) {
	t := strings.TrimSpace(v)
	factor := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, factor = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return 0, errors.New(`not a size (bytes, or a number with B, KB, MB, GB, TB, KiB, MiB, GiB, TiB: "1GiB")`)
	}
	if n != 0 && (n*factor/factor != n) {
		return 0, errors.New("size out of range")
	}
	return n * factor, nil
}

// ByFlag is the setting of the flag name (without its dash), and whether
// there is one.
func ByFlag(name string) (Setting, bool) {
	return find(func(s Setting) bool { return s.Flag == name })
}

// Usage is the doc line as a command's -h shows it: plain text, a link's
// text without its target (a page named by its file as docs/FILE), code
// without its backquotes (which the flag package would take for the
// value's name).
func (s Setting) Usage() string {
	plain := markdownLink.ReplaceAllStringFunc(s.Doc, func(link string) string {
		text := markdownLink.FindStringSubmatch(link)[1]
		if strings.HasSuffix(text, ".md") {
			return "docs/" + text // a page of the docs named by its file
		}
		return text
	})
	return strings.ReplaceAll(plain, "`", "")
}

// markdownLink is a Markdown link, [text](target).
var markdownLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// ByEnv is the setting read from the variable name, and whether there is one.
func ByEnv(name string) (Setting, bool) {
	return find(func(s Setting) bool { return s.Env == name })
}

// find is the first setting of the registry match takes.
func find(match func(Setting) bool) (Setting, bool) {
	for _, s := range All() {
		if match(s) {
			return s, true
		}
	}
	return Setting{}, false
}

// CheckEnv parses every registered variable lookup finds as its setting's
// kind and returns all the errors at once (nil when each one reads), so that
// start-up is refused naming each unreadable setting rather than running
// with its default.
func CheckEnv(lookup func(string) (string, bool)) error {
	var errs []error
	for _, s := range All() {
		if s.Env == "" {
			continue
		}
		// An empty variable counts as unset, as it always has: it is how
		// a test or a wrapper script clears one.
		if v, ok := lookup(s.Env); ok && v != "" {
			if err := s.Check(v); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
