package main

import (
	"flag"
	"strconv"

	"github.com/agenthost/agenthost/host/settings"
)

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
