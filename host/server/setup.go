package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/agenthost/agenthost/host/store"
)

// announceSetup prints a one-time setup link when the server has no
// organisation yet: nobody could sign in, and the link lets whoever reads
// this host's log create the first organisation and its admin in the page.
// Each start prints a new link; the ones before stay good for their day
// (another host may have printed one) and all end at the first setup.
func announceSetup(ctx context.Context, db *store.DB, addr string, logger *slog.Logger) error {
	secret, err := db.IssueSetupLink(ctx, store.SetupLinkTTL)
	if err != nil {
		return fmt.Errorf("setup link: %w", err)
	}
	if secret == "" {
		return nil
	}
	logger.Warn("no organisation yet: open the setup link to create the first one and its admin (it works once, for a day; or run agenthost admin bootstrap)",
		"setup", setupURL(addr, secret))
	return nil
}

// setupURL is the link for the listen address. The secret is in the
// fragment, which browsers send to no server, so it stays out of access
// logs and Referer headers.
func setupURL(addr, secret string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "/#setup=" + secret
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/#setup=" + secret
}
