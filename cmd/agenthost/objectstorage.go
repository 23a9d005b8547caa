package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/settings"
)

// objectStorageFile is the part of the configuration file that says where
// blobs are kept when not in the database's store.
type objectStorageFile struct {
	ObjectStorage yaml.Node `yaml:"objectStorage"`
}

// objectStorageSection is the objectStorage section (docs/configuration.md).
type objectStorageSection struct {
	Endpoint           string `yaml:"endpoint"`
	Region             string `yaml:"region"`
	Bucket             string `yaml:"bucket"`
	Prefix             string `yaml:"prefix"`
	PathStyle          bool   `yaml:"pathStyle"`
	AccessKeyID        string `yaml:"accessKeyId"`
	SecretAccessKey    string `yaml:"secretAccessKey"`
	SecretAccessKeyEnv string `yaml:"secretAccessKeyEnv"`
	SessionToken       string `yaml:"sessionToken"`
	SessionTokenEnv    string `yaml:"sessionTokenEnv"`
	Encryption         string `yaml:"encryption"`
	KMSKeyID           string `yaml:"kmsKeyId"`
	PartSize           int64  `yaml:"partSize"`
	Concurrency        int    `yaml:"concurrency"`
}

// s3Env are the variables that set or override objectStorage's keys; any of
// them set turns object storage on (so that a bucket variable misspelt is
// an error at start-up, not blobs silently kept elsewhere).
var s3Env = []string{
	"AGENTHOST_S3_ENDPOINT", "AGENTHOST_S3_REGION", "AGENTHOST_S3_BUCKET", "AGENTHOST_S3_PREFIX",
	"AGENTHOST_S3_PATH_STYLE", "AGENTHOST_S3_ACCESS_KEY_ID", "AGENTHOST_S3_SECRET_ACCESS_KEY",
	"AGENTHOST_S3_SESSION_TOKEN", "AGENTHOST_S3_ENCRYPTION", "AGENTHOST_S3_KMS_KEY_ID",
	"AGENTHOST_S3_PART_SIZE", "AGENTHOST_S3_CONCURRENCY",
}

// loadObjectStorage reads the objectStorage section of the configuration
// file at path (none: "") and the AGENTHOST_S3_* variables, which override
// it. It returns nil when neither says anything: blobs then stay with the
// database (a directory beside the embedded one, or PostgreSQL). Only the
// form is checked here; blob.NewS3 checks the values and the bucket.
func loadObjectStorage(path string, env func(string) string) (*blob.S3Config, error) {
	var sec objectStorageSection
	configured := false
	if path != "" {
		// Every command that reads the file comes here: a misspelt section
		// is refused for backup and admin storage as for serve.
		if _, err := settings.ReadFile(path); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading configuration: %w", err)
		}
		var f objectStorageFile
		if err := yaml.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("configuration %s: %w", path, err)
		}
		if f.ObjectStorage.Kind != 0 {
			if err := strictNode(&f.ObjectStorage, &sec); err != nil {
				return nil, fmt.Errorf("configuration %s: objectStorage: %w", path, err)
			}
			configured = true
		}
	}
	for _, k := range s3Env {
		if env(k) != "" {
			configured = true
		}
	}
	if !configured {
		return nil, nil
	}
	secret, err := fromEnvKey(sec.SecretAccessKey, sec.SecretAccessKeyEnv, "secretAccessKey", env)
	if err != nil {
		return nil, err
	}
	token, err := fromEnvKey(sec.SessionToken, sec.SessionTokenEnv, "sessionToken", env)
	if err != nil {
		return nil, err
	}
	cfg := blob.S3Config{
		Endpoint: sec.Endpoint, Region: sec.Region, Bucket: sec.Bucket, Prefix: sec.Prefix, PathStyle: sec.PathStyle,
		AccessKeyID: sec.AccessKeyID, SecretAccessKey: secret, SessionToken: token,
		Encryption: sec.Encryption, KMSKeyID: sec.KMSKeyID, PartSize: sec.PartSize, Concurrency: sec.Concurrency,
	}
	for k, dst := range map[string]*string{
		"AGENTHOST_S3_ENDPOINT": &cfg.Endpoint, "AGENTHOST_S3_REGION": &cfg.Region, "AGENTHOST_S3_BUCKET": &cfg.Bucket,
		"AGENTHOST_S3_PREFIX": &cfg.Prefix, "AGENTHOST_S3_ACCESS_KEY_ID": &cfg.AccessKeyID,
		"AGENTHOST_S3_SECRET_ACCESS_KEY": &cfg.SecretAccessKey, "AGENTHOST_S3_SESSION_TOKEN": &cfg.SessionToken,
		"AGENTHOST_S3_ENCRYPTION": &cfg.Encryption, "AGENTHOST_S3_KMS_KEY_ID": &cfg.KMSKeyID,
	} {
		if v := env(k); v != "" {
			*dst = v
		}
	}
	if v := env("AGENTHOST_S3_PATH_STYLE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("AGENTHOST_S3_PATH_STYLE: %q is not true or false", v)
		}
		cfg.PathStyle = b
	}
	if v := env("AGENTHOST_S3_PART_SIZE"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("AGENTHOST_S3_PART_SIZE: %q is not a number of bytes", v)
		}
		cfg.PartSize = n
	}
	if v := env("AGENTHOST_S3_CONCURRENCY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("AGENTHOST_S3_CONCURRENCY: %q is not a number", v)
		}
		cfg.Concurrency = n
	}
	cfg.Encryption = strings.ToLower(cfg.Encryption)
	return &cfg, nil
}

// fromEnvKey is a secret given in the file (value) or in the variable the
// file names (envName); naming an unset variable is an error, never an
// empty secret.
func fromEnvKey(value, envName, key string, env func(string) string) (string, error) {
	switch {
	case envName == "":
		return value, nil
	case value != "":
		return "", fmt.Errorf("objectStorage: %s and %sEnv are both set; give one", key, key)
	}
	v := env(envName)
	if v == "" {
		return "", fmt.Errorf("objectStorage.%sEnv names %s, which is not set", key, envName)
	}
	return v, nil
}

// blobsCmd is `agenthost blobs copy`: it copies every blob of the
// database's store (DATA/blobs beside the embedded database, or
// PostgreSQL's) into the configured object storage, so that an
// installation can move to it without losing its files. It is idempotent
// and resumable; serve and worker may run meanwhile (blobs they store after
// the copy started are copied by the next run).
func blobsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "copy" {
		fmt.Fprintln(stderr, "usage: agenthost blobs copy [-data DIR] [-database URL] [-config FILE]")
		if len(args) == 0 || args[0] == "-h" || args[0] == "help" {
			return nil
		}
		return fmt.Errorf("blobs: unknown subcommand %q", args[0])
	}
	fs := flag.NewFlagSet("blobs copy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sf := addStorageFlags(fs)
	configPath := fs.String("config", envOr("AGENTHOST_CONFIG", ""), "configuration file with the objectStorage section (see docs/configuration.md); AGENTHOST_S3_* override it")
	if ok, err := parseArgs(fs, args[1:]); !ok {
		return err
	}
	s3, err := loadObjectStorage(*configPath, os.Getenv)
	if err != nil {
		return err
	}
	if s3 == nil {
		return errors.New("blobs copy: no object storage configured: give -config with an objectStorage section, or AGENTHOST_S3_* variables")
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	db, err := sf.open(ctx, logger)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := prepareSchema(ctx, db, false); err != nil {
		return err
	}
	from, err := sf.blobs(ctx, db, nil, logger)
	if err != nil {
		return err
	}
	to, err := sf.blobs(ctx, db, s3, logger)
	if err != nil {
		return err
	}
	src, ok := from.(blob.Source)
	if !ok {
		return fmt.Errorf("blobs copy: the %s blob store cannot list its blobs", db.Dialect())
	}
	dst, ok := to.(blob.Destination)
	if !ok {
		return errors.New("blobs copy: the object storage cannot take blobs")
	}
	seen := 0
	res, err := blob.Copy(ctx, dst, src, func(string, bool) {
		if seen++; seen%1000 == 0 {
			logger.Info("copying blobs", "done", seen)
		}
	})
	fmt.Fprintf(stdout, "copied %d blobs (%d bytes) to %s, %d were there already\n", res.Copied, res.Bytes, s3.String(), res.Present)
	if err != nil {
		return fmt.Errorf("blobs copy stopped (run it again to resume): %w", err)
	}
	return nil
}
