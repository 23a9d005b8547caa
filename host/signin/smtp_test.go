package signin_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/agenthost/agenthost/host/signin"
	"github.com/agenthost/agenthost/host/tenancy"
)

// mailbox is a real SMTP server (github.com/emersion/go-smtp) in the test
// process, with STARTTLS and PLAIN authentication, keeping what it
// receives.
type mailbox struct {
	mu   sync.Mutex
	msgs []mail
	user string
	pass string
}

type mail struct {
	from string
	to   []string
	data string
}

type mailSession struct {
	b    *mailbox
	auth bool
	cur  mail
}

func (b *mailbox) NewSession(*smtp.Conn) (smtp.Session, error) { return &mailSession{b: b}, nil }

func (s *mailSession) AuthMechanisms() []string { return []string{sasl.Plain} }
func (s *mailSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.b.user || pass != s.b.pass {
			return errors.New("invalid credentials")
		}
		s.auth = true
		return nil
	}), nil
}
func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	if !s.auth {
		return smtp.ErrAuthRequired
	}
	s.cur = mail{from: from}
	return nil
}
func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.cur.to = append(s.cur.to, to)
	return nil
}
func (s *mailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = string(b)
	s.b.mu.Lock()
	s.b.msgs = append(s.b.msgs, s.cur)
	s.b.mu.Unlock()
	return nil
}
func (s *mailSession) Reset()        { s.cur = mail{} }
func (s *mailSession) Logout() error { return nil }

// startMailbox serves SMTP with STARTTLS on a loopback port; it returns
// the mailbox, its port and the roots that trust its certificate.
func startMailbox(t *testing.T) (*mailbox, int, *x509.CertPool) {
	t.Helper()
	// httptest's TLS server gives a certificate for 127.0.0.1 and its pool.
	ts := httptest.NewTLSServer(nil)
	cert := ts.TLS.Certificates[0]
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	ts.Close()
	b := &mailbox{user: "agenthost", pass: "mail-pass"}
	srv := smtp.NewServer(b)
	srv.Domain = "127.0.0.1"
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return b, ln.Addr().(*net.TCPAddr).Port, pool
}

// TestInvitationMail: an invitation is mailed through a real SMTP server
// over STARTTLS with authentication; the mail holds the link, the API
// answer does not; a server that refuses leaves the invitation made and
// the link returned with the reason; a header injection is refused.
func TestInvitationMail(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	tn, _ := db.CreateTenant(ctx, "Acme")
	adm, _ := db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "root@acme.test", Admin: true})
	admin := tenancy.Principal{TenantID: tn.ID, UserID: adm.ID, Admin: true}
	box, port, pool := startMailbox(t)

	cfg := signin.SMTP{Host: "127.0.0.1", Port: port, Username: "agenthost", Password: "mail-pass", From: "agenthost@acme.test"}
	m := signin.NewSMTPMailer(cfg)
	m.TLS = &tls.Config{RootCAs: pool}
	inv := signin.NewInvitations(db, m, nil, signin.Config{PublicURL: "https://agenthost.acme.test"})
	got, err := inv.Invite(ctx, admin, "http://ignored", signin.InviteRequest{Email: "new@acme.test"})
	if err != nil || !got.Mailed || got.Link != "" || got.MailError != "" {
		t.Fatalf("invite: %+v %v", got, err)
	}
	box.mu.Lock()
	msgs := append([]mail{}, box.msgs...)
	box.mu.Unlock()
	if len(msgs) != 1 || msgs[0].from != "agenthost@acme.test" || len(msgs[0].to) != 1 || msgs[0].to[0] != "new@acme.test" {
		t.Fatalf("mail: %+v", msgs)
	}
	if !strings.Contains(msgs[0].data, "https://agenthost.acme.test/invite/ahi_") || !strings.Contains(msgs[0].data, "Subject: Invitation to Acme") {
		t.Fatalf("mail body: %s", msgs[0].data)
	}
	// The link in the mail is the invitation's.
	secret := msgs[0].data[strings.Index(msgs[0].data, "/invite/")+len("/invite/"):][:47]
	if i, err := db.InvitationBySecret(ctx, secret); err != nil || i.ID != got.Invitation.ID {
		t.Fatalf("mailed link: %q %+v %v", secret, i, err)
	}

	// Wrong password: the server refuses; the invitation stands, the link
	// is returned with the reason.
	bad := cfg
	bad.Password = "wrong"
	mb := signin.NewSMTPMailer(bad)
	mb.TLS = &tls.Config{RootCAs: pool}
	inv2 := signin.NewInvitations(db, mb, nil, signin.Config{PublicURL: "https://agenthost.acme.test"})
	got2, err := inv2.Invite(ctx, admin, "", signin.InviteRequest{Email: "other@acme.test"})
	if err != nil || got2.Mailed || !strings.Contains(got2.Link, "/invite/ahi_") || !strings.Contains(got2.MailError, "authentication") {
		t.Fatalf("refused mail: %+v %v", got2, err)
	}
	// An untrusted certificate is refused (no mail in clear text).
	mu := signin.NewSMTPMailer(cfg)
	if err := mu.Send(ctx, "x@acme.test", "s", "b"); err == nil || !strings.Contains(err.Error(), "STARTTLS") {
		t.Fatalf("untrusted certificate: %v", err)
	}
	if err := m.Send(ctx, "x@acme.test\r\nBcc: y@evil.test", "s", "b"); err == nil {
		t.Fatal("header injection sent")
	}
	// Nothing listening: a clear error, quickly.
	down := cfg
	down.Port = 1
	if err := signin.NewSMTPMailer(down).Send(ctx, "x@acme.test", "s", "b"); err == nil {
		t.Fatal("no server, no error")
	}
	list, _ := db.ListInvitations(ctx, admin)
	if len(list) != 2 {
		t.Fatalf("invitations kept: %d", len(list))
	}
}
