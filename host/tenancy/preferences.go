package tenancy

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Preferences are a person's own settings (docs/ui.md, "Settings and
// themes"): they follow the person across browsers and reach their
// conversations on the server.
type Preferences struct {
	// Language is the UI's language as a BCP 47 tag ("en", "de"); empty:
	// the browser's.
	Language string `json:"language"`
	// Theme is light, dark or system (the operating system's choice,
	// also what empty means).
	Theme string `json:"theme"`
	// CustomInstructions are added to every conversation of the person,
	// after the host's own system prompt (they never replace it).
	CustomInstructions string `json:"customInstructions"`
	// DefaultModel (provider/model) is the model a new conversation uses
	// when it names none, where the workspace allows it; elsewhere the
	// workspace's default answers.
	DefaultModel string `json:"defaultModel"`
}

// Bounds of Preferences.
const (
	// MaxCustomInstructions bounds the custom instructions in bytes: they
	// go with every model call of the person's rounds.
	MaxCustomInstructions = 4000
	maxModelID            = 200
)

// The themes a person may pick.
const (
	ThemeSystem = "system"
	ThemeLight  = "light"
	ThemeDark   = "dark"
)

// languageTag is a BCP 47 tag's shape (RFC 5646 section 2.1, primary
// language and subtags), enough to refuse what is not one.
var languageTag = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,4}$`)

// Normalize returns p with its defaults filled in ("system" theme) and
// surrounding space trimmed, or ErrInvalid naming the field that is not
// acceptable.
func (p Preferences) Normalize() (Preferences, error) {
	p.Language = strings.TrimSpace(p.Language)
	p.Theme = strings.TrimSpace(p.Theme)
	p.DefaultModel = strings.TrimSpace(p.DefaultModel)
	p.CustomInstructions = strings.TrimSpace(p.CustomInstructions)
	if p.Theme == "" {
		p.Theme = ThemeSystem
	}
	switch {
	case p.Language != "" && !languageTag.MatchString(p.Language):
		return p, fmt.Errorf("%w: language %q is not a language tag", ErrInvalid, p.Language)
	case p.Theme != ThemeSystem && p.Theme != ThemeLight && p.Theme != ThemeDark:
		return p, fmt.Errorf("%w: theme %q: light, dark or system", ErrInvalid, p.Theme)
	case !utf8.ValidString(p.CustomInstructions):
		return p, fmt.Errorf("%w: customInstructions are not valid UTF-8", ErrInvalid)
	case len(p.CustomInstructions) > MaxCustomInstructions:
		return p, fmt.Errorf("%w: customInstructions are %d bytes, more than the limit of %d", ErrInvalid, len(p.CustomInstructions), MaxCustomInstructions)
	case strings.ContainsRune(p.CustomInstructions, 0):
		return p, fmt.Errorf("%w: customInstructions hold a NUL character", ErrInvalid)
	}
	if p.DefaultModel != "" {
		prov, name, ok := strings.Cut(p.DefaultModel, "/")
		if !ok || prov == "" || name == "" || len(p.DefaultModel) > maxModelID || strings.ContainsAny(p.DefaultModel, ", \n\t") ||
			!utf8.ValidString(p.DefaultModel) {
			return p, fmt.Errorf("%w: defaultModel %q is not provider/model", ErrInvalid, p.DefaultModel)
		}
	}
	return p, nil
}
