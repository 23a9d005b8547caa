package signin

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/smtp"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// InvitationStore is what invitations need of the store.
type InvitationStore interface {
	CreateInvitation(ctx context.Context, p tenancy.Principal, n store.NewInvitation) (store.Invitation, string, error)
	ListInvitations(ctx context.Context, p tenancy.Principal) ([]store.Invitation, error)
	RevokeInvitation(ctx context.Context, p tenancy.Principal, id string) (store.Invitation, error)
	InvitationBySecret(ctx context.Context, secret string) (store.Invitation, error)
	TenantByRef(ctx context.Context, ref string) (tenancy.Tenant, error)
	Tenant(ctx context.Context, p tenancy.Principal) (tenancy.Tenant, error)
}

// Mailer sends one plain-text message.
type Mailer interface {
	Send(ctx context.Context, to, subject, body string) error
}

// Invitations makes, lists and revokes invitations, mails their links when
// a mail server is configured, and serves the link's landing page.
type Invitations struct {
	store  InvitationStore
	mail   Mailer // nil: the link is shown to copy
	signIn *Service
	ttl    time.Duration
	public string
	// Audit records invitations made and revoked; nil: none.
	Audit audit.Recorder
	// Passkeys offers registering a passkey on the landing page (the
	// workspace UI's /join page, host/passkey), for tenants with or
	// without a sign-in provider.
	Passkeys bool
}

// NewInvitations builds the invitation service; mail nil shows links
// instead of sending them; signIn (may be nil) offers the tenant's
// providers on the landing page.
func NewInvitations(st InvitationStore, mail Mailer, signIn *Service, cfg Config) *Invitations {
	cfg = cfg.withDefaults()
	return &Invitations{store: st, mail: mail, signIn: signIn, ttl: cfg.InvitationTTL, public: strings.TrimRight(cfg.PublicURL, "/")}
}

// InviteRequest is POST /api/v1/invitations's body.
type InviteRequest struct {
	Email      string        `json:"email"`
	Admin      bool          `json:"admin"`
	Workspaces []store.Grant `json:"workspaces"`
	// TTLHours is how long the link is valid [the configured default].
	TTLHours float64 `json:"ttlHours"`
}

// Invited is what creating an invitation answers: the invitation, and its
// link when no mail was sent (Mailed false) so the admin passes it on.
type Invited struct {
	Invitation store.Invitation `json:"invitation"`
	Mailed     bool             `json:"mailed"`
	Link       string           `json:"link,omitempty"`
	// MailError says why the mail could not be sent (the link is then
	// given instead).
	MailError string `json:"mailError,omitempty"`
}

// Invite makes an invitation for the admin p and mails its link (base is
// the server's address as the admin reached it, used when no publicURL is
// configured). When the mail cannot be sent, the invitation is kept and
// the link returned with the reason (MailError), so nothing is lost.
func (v *Invitations) Invite(ctx context.Context, p tenancy.Principal, base string, r InviteRequest) (Invited, error) {
	ttl := v.ttl
	if r.TTLHours > 0 {
		ttl = time.Duration(r.TTLHours * float64(time.Hour))
	}
	inv, secret, err := v.store.CreateInvitation(ctx, p, store.NewInvitation{Email: r.Email, Admin: r.Admin, Workspaces: r.Workspaces, TTL: ttl})
	if err != nil {
		return Invited{}, err
	}
	root := v.public
	if root == "" {
		root = strings.TrimRight(base, "/")
	}
	link := root + "/invite/" + secret
	out := Invited{Invitation: inv}
	if v.Audit != nil {
		grants := make([]any, 0, len(inv.Workspaces))
		for _, g := range inv.Workspaces {
			grants = append(grants, map[string]any{"workspaceId": g.WorkspaceID, "role": string(g.Role)})
		}
		v.record(ctx, audit.Entry{Action: InvitationCreated, TenantID: p.TenantID, Actor: audit.Actor{Kind: audit.ActorUser, ID: p.UserID},
			TargetType: "invitation", TargetID: inv.ID,
			Detail: audit.Detail(map[string]any{"email": inv.Email, "admin": inv.Admin, "workspaces": grants, "expiresAt": inv.ExpiresAt})})
	}
	if v.mail == nil {
		out.Link = link
		return out, nil
	}
	org := "agenthost"
	if tn, err := v.store.Tenant(ctx, p); err == nil {
		org = tn.Name
	}
	body := fmt.Sprintf("You are invited to %s on agenthost.\r\n\r\nOpen this link to sign in and join (valid until %s, usable once):\r\n\r\n%s\r\n",
		org, inv.ExpiresAt.UTC().Format("2 Jan 2006 15:04 MST"), link)
	if err := v.mail.Send(ctx, inv.Email, "Invitation to "+org+" on agenthost", body); err != nil {
		out.Link = link
		out.MailError = "the invitation is made, but the mail could not be sent (pass the link on): " + err.Error()
		return out, nil
	}
	out.Mailed = true
	return out, nil
}

// List lists the tenant's invitations.
func (v *Invitations) List(ctx context.Context, p tenancy.Principal) ([]store.Invitation, error) {
	return v.store.ListInvitations(ctx, p)
}

// Revoke ends a pending invitation.
func (v *Invitations) Revoke(ctx context.Context, p tenancy.Principal, id string) (store.Invitation, error) {
	inv, err := v.store.RevokeInvitation(ctx, p, id)
	if err == nil && v.Audit != nil {
		v.record(ctx, audit.Entry{Action: InvitationRevoked, TenantID: p.TenantID, Actor: audit.Actor{Kind: audit.ActorUser, ID: p.UserID},
			TargetType: "invitation", TargetID: inv.ID, Detail: audit.Detail(map[string]any{"email": inv.Email})})
	}
	return inv, err
}

// record appends to the audit log; a lost record is logged, the change
// it describes stands (as package audit says).
func (v *Invitations) record(ctx context.Context, e audit.Entry) {
	if err := v.Audit.Record(ctx, e); err != nil {
		slog.Default().Error("audit record lost", "action", e.Action, "err", err)
	}
}

// HandleLanding serves GET /invite/:secret: the invitation's page, which
// leads to sign-in with the invited tenant's provider (straight there
// when it has one).
func (v *Invitations) HandleLanding() fiber.Handler {
	return func(c *fiber.Ctx) error {
		secret := c.Params("secret")
		inv, err := v.store.InvitationBySecret(c.UserContext(), secret)
		page := v.signIn
		if page == nil {
			page = &Service{}
		}
		if err != nil {
			msg := err.Error()
			msg = strings.TrimPrefix(msg, tenancy.ErrUnauthenticated.Error()+": ")
			return page.page(c, fiber.StatusGone, "This invitation cannot be used", msg+". Ask the person who invited you for a new one.")
		}
		var links [][2]string
		if v.signIn != nil {
			for _, n := range v.signIn.order {
				pr := v.signIn.providers[n]
				if tn, err := v.store.TenantByRef(c.UserContext(), pr.cfg.Tenant); err == nil && tn.ID == inv.TenantID {
					links = append(links, [2]string{"/auth/oidc/" + n + "?invitation=" + secret, "Sign in with " + pr.cfg.Label})
				}
			}
		}
		if v.Passkeys {
			links = append(links, [2]string{"/join?invitation=" + secret, "Register a passkey"})
		}
		if len(links) == 1 {
			c.Set("Referrer-Policy", "no-referrer")
			c.Set("Cache-Control", "no-store")
			return c.Redirect(links[0][0], fiber.StatusFound)
		}
		if len(links) == 0 {
			return page.page(c, fiber.StatusOK, "You are invited", "The invitation for "+inv.Email+
				" is valid, but this organisation has no sign-in provider configured here yet. Ask its admin.", [2]string{"/", "Home"})
		}
		return page.page(c, fiber.StatusOK, "You are invited", "Sign in as "+inv.Email+" to accept the invitation.", links...)
	}
}

// SMTPMailer sends mail through an SMTP server (RFC 5321), with STARTTLS
// or implicit TLS; PLAIN authentication only over TLS.
type SMTPMailer struct {
	cfg SMTP
	// TLS configures the TLS connection [the system's roots, the host's
	// name]; tests set their own roots.
	TLS *tls.Config
	// Timeout bounds one message's delivery [30 s].
	Timeout time.Duration
}

// NewSMTPMailer returns a mailer for the configured server.
func NewSMTPMailer(cfg SMTP) *SMTPMailer {
	c := Config{SMTP: &cfg}.withDefaults()
	return &SMTPMailer{cfg: *c.SMTP}
}

// Send delivers one message to one recipient.
func (m *SMTPMailer) Send(ctx context.Context, to, subject, body string) error {
	if strings.ContainsAny(to, "\r\n<>") || strings.ContainsAny(subject, "\r\n") {
		return errors.New("smtp: refusing a header with line breaks")
	}
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr := net.JoinHostPort(m.cfg.Host, strconv.Itoa(m.cfg.Port))
	tlsCfg := m.TLS
	if tlsCfg == nil {
		tlsCfg = &tls.Config{}
	}
	tlsCfg = tlsCfg.Clone()
	if tlsCfg.ServerName == "" {
		tlsCfg.ServerName = m.cfg.Host
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("smtp: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if m.cfg.TLS == "tls" {
		conn = tls.Client(conn, tlsCfg)
	}
	c, err := smtp.NewClient(conn, m.cfg.Host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("smtp: %w", err)
	}
	defer c.Close()
	if m.cfg.TLS == "starttls" {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return errors.New("smtp: the server offers no STARTTLS (set smtp.tls)")
		}
		if err := c.StartTLS(tlsCfg); err != nil {
			return fmt.Errorf("smtp: STARTTLS: %w", err)
		}
	}
	if m.cfg.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", m.cfg.Username, m.cfg.Password, m.cfg.Host)); err != nil {
			return fmt.Errorf("smtp: authentication: %w", err)
		}
	}
	if err := c.Mail(m.cfg.From); err != nil {
		return fmt.Errorf("smtp: MAIL FROM: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("smtp: RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("smtp: DATA: %w", err)
	}
	msg := "From: " + m.cfg.From + "\r\nTo: " + to + "\r\nSubject: " + mime.QEncoding.Encode("utf-8", subject) +
		"\r\nDate: " + time.Now().UTC().Format(time.RFC1123Z) + "\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n" +
		"Content-Transfer-Encoding: 8bit\r\n\r\n" + body
	if _, err := w.Write([]byte(msg)); err != nil {
		return fmt.Errorf("smtp: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("smtp: the server refused the message: %w", err)
	}
	return c.Quit()
}
