package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"gopkg.in/yaml.v3"

	"github.com/agenthost/agenthost/host/server"
	"github.com/agenthost/agenthost/host/settings"
)

// checkSettings refuses start-up of command when a variable it reads does
// not parse as its setting's kind, or the configuration file has a key
// nobody reads; every error names the setting and the value. Every command
// that reads a setting calls it right after its flags are parsed, before
// anything is opened.
//
// It is also where a variable reaches its flag (bindEnv): a flag the
// command line did not give takes its variable's value once the value has
// been checked, so that no flag falls back to its default on a value it
// cannot read. A flag's default, as `COMMAND -h` shows it, is therefore the
// code's, never a variable's; TestConfigFlagDefaults holds it to the
// registry's. The file the -config flag of fs names (none without one) is
// read here, once and whole (server.ReadFile): a misspelt key or an
// unreadable value in any section refuses start-up; the result is what the
// command's sections are taken from.
func checkSettings(command string, fs *flag.FlagSet) (server.File, error) {
	err := checkEnvFor(command, os.LookupEnv)
	if berr := bindEnv(command, fs, os.LookupEnv); berr != nil {
		err = errors.Join(err, berr)
	}
	path := ""
	if f := fs.Lookup("config"); f != nil {
		path = f.Value.String()
	}
	file, ferr := server.ReadFile(path)
	if ferr != nil {
		err = errors.Join(err, ferr)
	}
	if err != nil {
		return server.File{}, fmt.Errorf("%s: refusing to start:\n%w", command, err)
	}
	return file, nil
}

// settingUsage is the -h text of the flag of a registered setting: the
// registry's doc line, the one docs/configuration.md shows, then what is
// particular to the command defining the flag, if anything. Every such
// flag takes its text from here (TestConfigFlagDefaults).
func settingUsage(flag string, particular ...string) string {
	s, ok := settings.ByFlag(flag)
	if !ok {
		return "(-" + flag + " is not in the settings registry)"
	}
	return strings.Join(append([]string{s.Usage()}, particular...), "; ")
}

// bindEnv sets each flag of fs the command line did not give to the value
// of its setting's variable, for the settings command reads (a flag of the
// same name that is another setting's, admin's -workspace, is left alone).
// A typed variable that is empty counts as unset, and one that does not
// read is skipped: checkEnvFor reports it. A text variable set to "" gives
// the flag "", which leaving it unset may not (AGENTHOST_OTLP_ENDPOINT=""
// exports none whatever OTEL_EXPORTER_OTLP_ENDPOINT says). List settings
// are left to their flags' own code: their variable holds several values
// (comma- or ";"-separated) where the flag takes one at a time.
func bindEnv(command string, fs *flag.FlagSet, lookup func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	for _, s := range settings.All() {
		if s.Flag == "" || s.Env == "" || s.Kind == settings.List || given[s.Flag] || !readBy(s, command) {
			continue
		}
		f := fs.Lookup(s.Flag)
		v, ok := lookup(s.Env)
		if f == nil || !ok || (v == "" && s.Kind != settings.String) || s.Check(v) != nil {
			continue
		}
		if err := f.Value.Set(v); err != nil {
			shown := strconv.Quote(v)
			if s.Secret {
				shown = "(secret, not shown)"
			}
			errs = append(errs, fmt.Errorf("%s=%s: %w: -%s: %w", s.Env, shown, settings.ErrValue, s.Flag, err))
		}
	}
	return errors.Join(errs...)
}

// checkEnvFor is settings.CheckEnv over the settings command reads.
func checkEnvFor(command string, lookup func(string) (string, bool)) error {
	var errs []error
	for _, s := range settings.All() {
		if s.Env == "" || !readBy(s, command) {
			continue
		}
		if v, ok := lookup(s.Env); ok && v != "" {
			if err := s.Check(v); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func readBy(s settings.Setting, command string) bool {
	for _, c := range strings.Fields(s.Commands) {
		if c == command {
			return true
		}
	}
	return false
}

// effective is one setting's value and where it came from.
type effective struct {
	setting settings.Setting
	value   string
	source  string // default, file, env or flag
}

// effectiveSettings resolves every setting as the commands do: a flag given
// on the command line, else the variable, else the file, else the default.
// Secrets are masked.
func effectiveSettings(fs *flag.FlagSet, lookup func(string) (string, bool), file *yaml.Node) []effective {
	given := map[string]string{}
	if fs != nil {
		fs.Visit(func(f *flag.Flag) { given[f.Name] = f.Value.String() })
	}
	var out []effective
	for _, s := range settings.All() {
		e := effective{setting: s, value: s.Default, source: "default"}
		if v, ok := settings.Lookup(file, s.File); ok {
			e.value, e.source = v, "file"
		}
		if v, ok := lookup(s.Env); s.Env != "" && ok && v != "" {
			e.value, e.source = v, "env"
		}
		if v, ok := given[s.Flag]; s.Flag != "" && ok {
			e.value, e.source = v, "flag"
		}
		if e.source != "default" && e.value != "" && (s.Secret || secretEnvName(s.Env)) {
			e.value = "********"
		}
		out = append(out, e)
	}
	return out
}

// configCmd prints the effective configuration: every setting of the
// registry, its value (secrets masked) and where it came from. It takes the
// settings' flags, so that `agenthost config -addr :9090` shows what
// `agenthost serve -addr :9090` would run with; it checks what it prints as
// start-up does and exits non-zero on anything unreadable.
func configCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: agenthost config [-FLAG VALUE]...   print the effective configuration (secrets masked) and where each value comes from: default, file, env or flag")
		fs.PrintDefaults()
	}
	given := map[string]*settingFlag{}
	for _, s := range settings.All() {
		if s.Flag == "" {
			continue
		}
		given[s.Flag] = &settingFlag{setting: s}
		fs.Var(given[s.Flag], s.Flag, s.Usage())
	}
	if ok, err := parseArgs(fs, args); !ok {
		return err
	}
	var errs []error
	fs.Visit(func(f *flag.Flag) {
		sf := given[f.Name]
		for _, v := range sf.values {
			errs = append(errs, sf.setting.Check(v))
		}
	})
	errs = append(errs, settings.CheckEnv(os.LookupEnv))
	path := os.Getenv("AGENTHOST_CONFIG")
	if f := fs.Lookup("config"); f != nil && f.Value.String() != "" {
		path = f.Value.String()
	}
	f, err := server.ReadFile(path)
	errs = append(errs, err)
	file := f.Root
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FLAG\tVARIABLE\tFILE KEY\tVALUE\tSOURCE")
	for _, e := range effectiveSettings(fs, os.LookupEnv, file) {
		s := e.setting
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", dash(s.Flag), dash(s.Env), dash(s.File), e.value, e.source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// settingFlag is a setting's flag in configCmd: it keeps what was given,
// checked after parsing so that every bad value is reported at once.
type settingFlag struct {
	setting settings.Setting
	values  []string
}

func (f *settingFlag) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(f.values, ",")
}

func (f *settingFlag) Set(v string) error { f.values = append(f.values, v); return nil }

// IsBoolFlag lets a boolean setting's flag stand alone (-migrate), as in
// the commands themselves.
func (f *settingFlag) IsBoolFlag() bool { return f.setting.Kind == settings.Bool }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
