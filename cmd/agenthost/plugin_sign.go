package main

import (
	"context"
	"crypto/ed25519"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/agenthost/agenthost/host/wasm/signature"
)

// pluginKeygenCmd writes PREFIX.pub and PREFIX.key.
func pluginKeygenCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin keygen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	prefix := fs.String("o", "", "output prefix: writes PREFIX.pub and PREFIX.key")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *prefix == "" {
		return fmt.Errorf("usage: agenthost plugin keygen -o PREFIX")
	}
	pub, priv, err := signature.GenerateKey()
	if err != nil {
		return err
	}
	if err := os.WriteFile(*prefix+".key", signature.EncodePrivate(priv), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(*prefix+".pub", signature.EncodePublic(pub), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "key %s: %s.pub (give to operators), %s.key (keep secret)\n", signature.IDOf(pub), *prefix, *prefix)
	return nil
}

// pluginSignCmd signs a plugin file in place or into -o.
func pluginSignCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin sign", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keyFile := fs.String("key", "", "private key file (from plugin keygen)")
	out := fs.String("o", "", "output file (default: sign in place)")
	file, err := parseWithFile(fs, args)
	if err != nil {
		return err
	}
	if *keyFile == "" {
		return fmt.Errorf("usage: agenthost plugin sign FILE -key KEYFILE [-o OUT]")
	}
	priv, err := signature.ReadPrivate(*keyFile)
	if err != nil {
		return err
	}
	module, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	signed, err := signature.Sign(module, priv)
	if err != nil {
		return err
	}
	if *out == "" {
		*out = file
	}
	if err := os.WriteFile(*out, signed, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "signed %s with key %s\n", *out, signature.IDOf(priv.Public().(ed25519.PublicKey)))
	return nil
}

// pluginVerifyCmd checks a plugin's signature against trusted public keys.
func pluginVerifyCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var pubs stringList
	fs.Var(&pubs, "pub", "trusted public key file (repeatable)")
	file, err := parseWithFile(fs, args)
	if err != nil {
		return err
	}
	if len(pubs) == 0 {
		return fmt.Errorf("usage: agenthost plugin verify FILE -pub KEYFILE [-pub KEYFILE...]")
	}
	trust, err := loadTrust(pubs)
	if err != nil {
		return err
	}
	module, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	id, err := trust.Verify(module)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	fmt.Fprintf(stdout, "%s: valid signature by trusted key %s\n", file, id)
	return nil
}

func loadTrust(files []string) (*signature.TrustStore, error) {
	var keys []ed25519.PublicKey
	for _, f := range files {
		k, err := signature.ReadPublic(f)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return signature.NewTrustStore(keys...), nil
}

// parseWithFile parses flags that may come before or after one FILE argument.
func parseWithFile(fs *flag.FlagSet, args []string) (string, error) {
	file := ""
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		file, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if file == "" && fs.NArg() > 0 {
		file = fs.Arg(0)
	}
	if file == "" {
		return "", fmt.Errorf("%s: missing FILE", fs.Name())
	}
	return file, nil
}
