package main

import (
	"context"
	"errors"
	"io"
)

func pluginCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("plugin: not implemented yet")
}
