package connections

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/agenthost/agenthost/host/tenancy"
)

// ProviderFiles is the provider of file servers: FTP, FTPS (explicit TLS)
// and SFTP, told apart by the connection's base URL scheme
// (ftp://host:21/dir, ftps://host:21/dir, sftp://host:22/dir), whose path
// is the base directory.
const ProviderFiles = "ftp"

// DefaultProviders are the providers every host knows without
// configuration: those connected with an API token or password, whose
// credentials go to the connection's own site only. OAuth providers need
// the operator's client registration (Options.Providers).
func DefaultProviders() []Provider {
	return []Provider{
		// Jira Cloud: basic authentication with the account's e-mail and an
		// API token, against the connection's site (https://NAME.atlassian.net).
		{Name: "jira"},
		// File servers: basic authentication (account and password, or an
		// SFTP key), the host speaking the protocol (host/filetransfer).
		{Name: ProviderFiles, Schemes: []string{"ftp", "ftps", "sftp"}},
	}
}

// checkFileServer checks what only file server connections carry: an SFTP
// connection pins its server's host key (there is no trust on first use:
// the user gives the fingerprint), a key is SFTP's only and must parse.
func checkFileServer(n NewToken, base string) error {
	u, _ := url.Parse(base)
	sftp := u != nil && u.Scheme == "sftp"
	if n.Provider != ProviderFiles {
		if n.HostKey != "" || n.PrivateKey != "" {
			return fmt.Errorf("%w: a host key or private key belongs to an SFTP connection", tenancy.ErrInvalid)
		}
		return nil
	}
	if base == "" {
		return fmt.Errorf("%w: a file server connection needs its URL (ftp://, ftps:// or sftp://host:port/base-directory)", tenancy.ErrInvalid)
	}
	if n.Auth != AuthBasic {
		return fmt.Errorf("%w: a file server connection authenticates by %q (account and password or key)", tenancy.ErrInvalid, AuthBasic)
	}
	if !sftp {
		if n.HostKey != "" || n.PrivateKey != "" {
			return fmt.Errorf("%w: a host key or private key belongs to an SFTP connection, not %s", tenancy.ErrInvalid, u.Scheme)
		}
		if strings.TrimSpace(n.Token) == "" {
			return fmt.Errorf("%w: an FTP connection needs the password", tenancy.ErrInvalid)
		}
		return nil
	}
	fp, ok := strings.CutPrefix(n.HostKey, "SHA256:")
	if raw, err := base64.RawStdEncoding.DecodeString(fp); !ok || err != nil || len(raw) != 32 {
		return fmt.Errorf("%w: an SFTP connection pins its server's host key: hostKey is its SHA256 fingerprint as `ssh-keyscan HOST | ssh-keygen -lf -` prints it (SHA256:...)", tenancy.ErrInvalid)
	}
	if n.PrivateKey != "" {
		if _, err := ssh.ParsePrivateKey([]byte(n.PrivateKey)); err != nil {
			return fmt.Errorf("%w: the private key does not parse (PEM, without a passphrase): %v", tenancy.ErrInvalid, err)
		}
	}
	return nil
}
