package main

import (
	"flag"
	"os"
	"strconv"
	"time"

	"github.com/agenthost/agenthost/host/settings"
)

// The env* helpers read a setting's variable for a flag's default or a
// value without a flag. checkSettings has refused start-up on a variable
// that does not parse (settings.Setting.Check), so the default they fall
// back to is only ever the one for an unset (or empty) variable.

func envDuration(key string, def time.Duration) time.Duration {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return def
}

func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}

func envInt64(key string, def int64) int64 {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	return def
}

func envBool(key string, def bool) bool {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	}
	return def
}

// envSize reads a size (settings.ParseSize: bytes, or with a unit).
func envSize(key string, def int64) int64 {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		if n, err := settings.ParseSize(v); err == nil {
			return n
		}
	}
	return def
}

// sizeValue is a flag of a size in bytes that takes the units of
// settings.ParseSize.
type sizeValue int64

func (v *sizeValue) String() string { return strconv.FormatInt(int64(*v), 10) }

func (v *sizeValue) Set(s string) error {
	n, err := settings.ParseSize(s)
	if err != nil {
		return err
	}
	*v = sizeValue(n)
	return nil
}

// sizeFlag defines a size flag with the default def and returns its value.
func sizeFlag(fs *flag.FlagSet, name string, def int64, usage string) *int64 {
	v := sizeValue(def)
	fs.Var(&v, name, usage)
	return (*int64)(&v)
}
