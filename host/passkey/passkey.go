// Package passkey signs people in with passkeys (WebAuthn credentials):
// registration for a signed-in person (several named passkeys each,
// revocable), and sign-in with a discoverable credential (no name typed)
// or narrowed by e-mail address. Verification is github.com/go-webauthn's;
// this package keeps the ceremony state server-side (the store's
// webauthn_ceremonies: one use, expiring), decides whose passkey it is, and
// refuses what the library reports (a replayed, forged or cloned
// assertion, a wrong origin).
//
// The relying party is the server's public URL: its host is the RP ID, its
// origin the one origin accepted. The user handle given to authenticators
// is the user's id (a random UUID, no personal data), or, for a person who
// registered from an invitation link before their user existed, 32 random
// bytes kept with the user.
package passkey

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Store is what the service needs of the store.
type Store interface {
	UserByID(ctx context.Context, userID string) (tenancy.User, error)
	UsersByEmail(ctx context.Context, email string) ([]tenancy.User, error)
	UserPasskeys(ctx context.Context, userID string) ([]store.Passkey, error)
	AddPasskey(ctx context.Context, userID, name string, credentialID, credential []byte, signCount uint32) (store.Passkey, error)
	RemovePasskey(ctx context.Context, userID, passkeyID string) (store.Passkey, error)
	PasskeyByCredentialID(ctx context.Context, credentialID []byte) (store.Passkey, error)
	UsePasskey(ctx context.Context, passkeyID string, signCount uint32, credential []byte) error
	SaveCeremony(ctx context.Context, kind, userID string, data []byte, ttl time.Duration) (string, error)
	TakeCeremony(ctx context.Context, id, kind string) (userID string, data []byte, err error)
	UserHandle(ctx context.Context, userID string) ([]byte, error)
	InvitationBySecret(ctx context.Context, secret string) (store.Invitation, error)
	AcceptInvitationWithPasskey(ctx context.Context, secret string, handle []byte, k store.NewPasskey) (tenancy.User, store.Passkey, error)
}

// Config names the relying party.
type Config struct {
	// PublicURL is the URL people open the server at (https://agents.example.com);
	// its host is the RP ID and its origin the only one accepted.
	PublicURL string
	// Name is shown by authenticators ["agenthost"].
	Name string
	// CeremonyTTL bounds the time from a ceremony's start to its finish [5 min].
	CeremonyTTL time.Duration
}

// Service runs passkey ceremonies.
type Service struct {
	st  Store
	wa  *webauthn.WebAuthn
	ttl time.Duration
}

// New builds the service for the relying party cfg names.
func New(st Store, cfg Config) (*Service, error) {
	u, err := url.Parse(cfg.PublicURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" {
		return nil, fmt.Errorf("passkey: public URL %q: want http(s)://host[:port]", cfg.PublicURL)
	}
	if cfg.Name == "" {
		cfg.Name = "agenthost"
	}
	if cfg.CeremonyTTL <= 0 {
		cfg.CeremonyTTL = 5 * time.Minute
	}
	timeout := webauthn.TimeoutConfig{Enforce: true, Timeout: cfg.CeremonyTTL, TimeoutUVD: cfg.CeremonyTTL}
	wa, err := webauthn.New(&webauthn.Config{
		RPID:          u.Hostname(),
		RPDisplayName: cfg.Name,
		RPOrigins:     []string{u.Scheme + "://" + u.Host},
		// No attestation: we trust the person holding the authenticator,
		// not its make (and asking for it costs privacy and a prompt).
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:        protocol.ResidentKeyRequirementRequired,
			RequireResidentKey: protocol.ResidentKeyRequired(),
			UserVerification:   protocol.VerificationPreferred,
		},
		Timeouts: webauthn.TimeoutsConfig{Login: timeout, Registration: timeout},
	})
	if err != nil {
		return nil, fmt.Errorf("passkey: %w", err)
	}
	return &Service{st: st, wa: wa, ttl: cfg.CeremonyTTL}, nil
}

// RPID is the relying party's id (the public URL's host).
func (s *Service) RPID() string { return s.wa.Config.RPID }

// waUser is a user as the WebAuthn library sees them.
type waUser struct {
	u      tenancy.User
	handle []byte
	keys   []store.Passkey
	creds  []webauthn.Credential
}

func (w *waUser) WebAuthnID() []byte                         { return w.handle }
func (w *waUser) WebAuthnName() string                       { return w.u.Email }
func (w *waUser) WebAuthnDisplayName() string                { return displayName(w.u) }
func (w *waUser) WebAuthnCredentials() []webauthn.Credential { return w.creds }

func displayName(u tenancy.User) string {
	if strings.TrimSpace(u.Name) != "" {
		return u.Name
	}
	return u.Email
}

func (s *Service) loadUser(ctx context.Context, u tenancy.User) (*waUser, error) {
	keys, err := s.st.UserPasskeys(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	handle, err := s.st.UserHandle(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	w := &waUser{u: u, handle: handle, keys: keys}
	for _, k := range keys {
		var c webauthn.Credential
		if err := json.Unmarshal(k.Credential, &c); err != nil {
			return nil, fmt.Errorf("passkey: stored credential %s: %w", k.ID, err)
		}
		w.creds = append(w.creds, c)
	}
	return w, nil
}

// refused turns the library's verdict into ErrUnauthenticated with its
// reason (the library's details name what failed, never a secret).
func refused(what string, err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		detail := pe.Details
		if pe.DevInfo != "" {
			detail += ": " + pe.DevInfo
		}
		return fmt.Errorf("%w: %s refused: %s", tenancy.ErrUnauthenticated, what, detail)
	}
	return fmt.Errorf("%w: %s refused: %v", tenancy.ErrUnauthenticated, what, err)
}

// BeginRegistration starts registering a new passkey for the signed-in
// person: the options go to navigator.credentials.create, the ceremony id
// comes back with the authenticator's answer.
func (s *Service) BeginRegistration(ctx context.Context, p tenancy.Principal) (string, *protocol.CredentialCreation, error) {
	u, err := s.st.UserByID(ctx, p.UserID)
	if err != nil {
		return "", nil, err
	}
	if u.TenantID != p.TenantID {
		return "", nil, fmt.Errorf("%w: user", tenancy.ErrNotFound)
	}
	w, err := s.loadUser(ctx, u)
	if err != nil {
		return "", nil, err
	}
	// A passkey already registered on this authenticator is not made
	// twice: the authenticator says so instead.
	creation, session, err := s.wa.BeginRegistration(w, webauthn.WithExclusions(webauthn.Credentials(w.creds).CredentialDescriptors()))
	if err != nil {
		return "", nil, fmt.Errorf("passkey: begin registration: %w", err)
	}
	id, err := s.save(ctx, store.CeremonyRegister, u.ID, session)
	if err != nil {
		return "", nil, err
	}
	return id, creation, nil
}

func (s *Service) save(ctx context.Context, kind, userID string, session *webauthn.SessionData) (string, error) {
	data, err := json.Marshal(session)
	if err != nil {
		return "", fmt.Errorf("passkey: ceremony: %w", err)
	}
	return s.st.SaveCeremony(ctx, kind, userID, data, s.ttl)
}

func (s *Service) take(ctx context.Context, id, kind string) (string, webauthn.SessionData, error) {
	var session webauthn.SessionData
	userID, data, err := s.st.TakeCeremony(ctx, id, kind)
	if err != nil {
		return "", session, err
	}
	if err := json.Unmarshal(data, &session); err != nil {
		return "", session, fmt.Errorf("passkey: ceremony: %w", err)
	}
	return userID, session, nil
}

// FinishRegistration verifies the authenticator's answer (the
// PublicKeyCredential as JSON) to the ceremony id and keeps the passkey
// under name. The ceremony must be the principal's own.
func (s *Service) FinishRegistration(ctx context.Context, p tenancy.Principal, ceremonyID, name string, response []byte) (store.Passkey, error) {
	if strings.TrimSpace(name) == "" {
		return store.Passkey{}, fmt.Errorf("%w: a passkey needs a name", tenancy.ErrInvalid)
	}
	userID, session, err := s.take(ctx, ceremonyID, store.CeremonyRegister)
	if err != nil {
		return store.Passkey{}, err
	}
	if userID != p.UserID {
		return store.Passkey{}, fmt.Errorf("%w: the passkey ceremony is another user's", tenancy.ErrUnauthenticated)
	}
	u, err := s.st.UserByID(ctx, userID)
	if err != nil {
		return store.Passkey{}, err
	}
	w, err := s.loadUser(ctx, u)
	if err != nil {
		return store.Passkey{}, err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return store.Passkey{}, refused("passkey registration", err)
	}
	cred, err := s.wa.CreateCredential(w, session, parsed)
	if err != nil {
		return store.Passkey{}, refused("passkey registration", err)
	}
	data, err := json.Marshal(cred)
	if err != nil {
		return store.Passkey{}, fmt.Errorf("passkey: %w", err)
	}
	return s.st.AddPasskey(ctx, u.ID, name, cred.ID, data, cred.Authenticator.SignCount)
}

// BeginSignIn starts a sign-in. With an e-mail address of exactly one
// person who has passkeys, the authenticator is asked for theirs; otherwise
// (no address, an unknown one, or one several organisations share) it is a
// discoverable sign-in where the authenticator offers the passkeys it has
// for this server. Both answers look alike, so they reveal nothing about
// which addresses exist.
func (s *Service) BeginSignIn(ctx context.Context, email string) (string, *protocol.CredentialAssertion, error) {
	if email = strings.TrimSpace(email); email != "" {
		users, err := s.st.UsersByEmail(ctx, email)
		if err != nil {
			return "", nil, err
		}
		var only *waUser
		n := 0
		for _, u := range users {
			if u.DeactivatedAt != nil {
				continue
			}
			w, err := s.loadUser(ctx, u)
			if err != nil {
				return "", nil, err
			}
			if len(w.creds) > 0 {
				only, n = w, n+1
			}
		}
		if n == 1 {
			assertion, session, err := s.wa.BeginLogin(only)
			if err != nil {
				return "", nil, fmt.Errorf("passkey: begin sign-in: %w", err)
			}
			id, err := s.save(ctx, store.CeremonySignIn, only.u.ID, session)
			return id, assertion, err
		}
	}
	assertion, session, err := s.wa.BeginDiscoverableLogin()
	if err != nil {
		return "", nil, fmt.Errorf("passkey: begin sign-in: %w", err)
	}
	id, err := s.save(ctx, store.CeremonySignIn, "", session)
	return id, assertion, err
}

// FinishSignIn verifies the authenticator's assertion (the
// PublicKeyCredential as JSON) to the ceremony id and returns the person it
// proves, and the passkey used. The ceremony is used up whatever the
// outcome; a deactivated person, a revoked passkey, a signature that does
// not verify, another origin or a counter that did not go up are
// ErrUnauthenticated.
func (s *Service) FinishSignIn(ctx context.Context, ceremonyID string, response []byte) (tenancy.User, store.Passkey, error) {
	userID, session, err := s.take(ctx, ceremonyID, store.CeremonySignIn)
	if err != nil {
		return tenancy.User{}, store.Passkey{}, err
	}
	return s.verifyAssertion(ctx, userID, session, response)
}

// verifyAssertion checks an assertion against a taken ceremony: of userID's
// passkeys when userID is set, else of whichever passkey the (discoverable)
// answer names.
func (s *Service) verifyAssertion(ctx context.Context, userID string, session webauthn.SessionData, response []byte) (tenancy.User, store.Passkey, error) {
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return tenancy.User{}, store.Passkey{}, refused("passkey sign-in", err)
	}
	var who *waUser
	var cred *webauthn.Credential
	if userID != "" {
		u, err := s.st.UserByID(ctx, userID)
		if err != nil {
			return tenancy.User{}, store.Passkey{}, err
		}
		if who, err = s.loadUser(ctx, u); err != nil {
			return tenancy.User{}, store.Passkey{}, err
		}
		if cred, err = s.wa.ValidateLogin(who, session, parsed); err != nil {
			return tenancy.User{}, store.Passkey{}, refused("passkey sign-in", err)
		}
	} else {
		handler := func(rawID, userHandle []byte) (webauthn.User, error) {
			// The passkey must exist and be the user handle's: the
			// handle alone names a user, the key proves it.
			k, err := s.st.PasskeyByCredentialID(ctx, rawID)
			if err != nil {
				return nil, err
			}
			u, err := s.st.UserByID(ctx, k.UserID)
			if err != nil {
				return nil, err
			}
			w, err := s.loadUser(ctx, u)
			if err != nil {
				return nil, err
			}
			if !bytes.Equal(w.handle, userHandle) {
				return nil, errors.New("the passkey is not this user's")
			}
			who = w
			return w, nil
		}
		if _, cred, err = s.wa.ValidatePasskeyLogin(handler, session, parsed); err != nil {
			return tenancy.User{}, store.Passkey{}, refused("passkey sign-in", err)
		}
	}
	if who.u.DeactivatedAt != nil {
		return tenancy.User{}, store.Passkey{}, fmt.Errorf("%w: the user is deactivated", tenancy.ErrUnauthenticated)
	}
	if cred.Authenticator.CloneWarning {
		return tenancy.User{}, store.Passkey{}, fmt.Errorf("%w: %w", tenancy.ErrUnauthenticated, store.ErrCloned)
	}
	var key store.Passkey
	for _, k := range who.keys {
		if bytes.Equal(k.CredentialID, cred.ID) {
			key = k
		}
	}
	if key.ID == "" {
		return tenancy.User{}, store.Passkey{}, fmt.Errorf("%w: unknown passkey", tenancy.ErrUnauthenticated)
	}
	data, err := json.Marshal(cred)
	if err != nil {
		return tenancy.User{}, store.Passkey{}, fmt.Errorf("passkey: %w", err)
	}
	if err := s.st.UsePasskey(ctx, key.ID, cred.Authenticator.SignCount, data); errors.Is(err, store.ErrCloned) {
		// Another sign-in with the same counter won the race: this one
		// is a replay or a clone.
		return tenancy.User{}, store.Passkey{}, fmt.Errorf("%w: %w", tenancy.ErrUnauthenticated, err)
	} else if err != nil {
		return tenancy.User{}, store.Passkey{}, err
	}
	return who.u, key, nil
}

// BeginSecondFactor starts the second factor of a pending session: an
// assertion narrowed to the principal's own passkeys. A person without a
// passkey is ErrInvalid (they register one first).
func (s *Service) BeginSecondFactor(ctx context.Context, p tenancy.Principal) (string, *protocol.CredentialAssertion, error) {
	u, err := s.st.UserByID(ctx, p.UserID)
	if err != nil {
		return "", nil, err
	}
	if u.TenantID != p.TenantID {
		return "", nil, fmt.Errorf("%w: user", tenancy.ErrNotFound)
	}
	w, err := s.loadUser(ctx, u)
	if err != nil {
		return "", nil, err
	}
	if len(w.creds) == 0 {
		return "", nil, fmt.Errorf("%w: register a passkey first (POST /api/v1/session/second-factor/passkeys/options)", tenancy.ErrInvalid)
	}
	assertion, session, err := s.wa.BeginLogin(w)
	if err != nil {
		return "", nil, fmt.Errorf("passkey: begin second factor: %w", err)
	}
	id, err := s.save(ctx, store.CeremonySecondFactor, u.ID, session)
	return id, assertion, err
}

// FinishSecondFactor verifies the assertion answering a second-factor
// ceremony: the ceremony must be the principal's (another person's, or a
// sign-in's, is refused) and the passkey theirs. The ceremony is used up
// whatever the outcome, so an answer cannot be replayed.
func (s *Service) FinishSecondFactor(ctx context.Context, p tenancy.Principal, ceremonyID string, response []byte) (store.Passkey, error) {
	userID, session, err := s.take(ctx, ceremonyID, store.CeremonySecondFactor)
	if err != nil {
		return store.Passkey{}, err
	}
	if userID == "" || userID != p.UserID {
		return store.Passkey{}, fmt.Errorf("%w: the passkey ceremony is another user's", tenancy.ErrUnauthenticated)
	}
	u, k, err := s.verifyAssertion(ctx, userID, session, response)
	if err != nil {
		return store.Passkey{}, err
	}
	if u.ID != p.UserID || k.UserID != p.UserID {
		return store.Passkey{}, fmt.Errorf("%w: the passkey is another user's", tenancy.ErrUnauthenticated)
	}
	return k, nil
}

// List lists the principal's own passkeys.
func (s *Service) List(ctx context.Context, p tenancy.Principal) ([]store.Passkey, error) {
	return s.st.UserPasskeys(ctx, p.UserID)
}

// Remove revokes one of the principal's own passkeys.
func (s *Service) Remove(ctx context.Context, p tenancy.Principal, passkeyID string) (store.Passkey, error) {
	return s.st.RemovePasskey(ctx, p.UserID, passkeyID)
}

// invitationCeremony is what an invitation's registration keeps between
// its begin and finish.
type invitationCeremony struct {
	Session    webauthn.SessionData `json:"session"`
	Invitation string               `json:"invitation"`
	Handle     []byte               `json:"handle"`
}

// BeginInvitation starts registering a passkey for the person an
// invitation link (its secret) invites, before their user exists. It
// returns the ceremony id, the options for navigator.credentials.create and
// the invited address. A secret that is not a pending invitation's is
// ErrUnauthenticated.
func (s *Service) BeginInvitation(ctx context.Context, secret string) (string, *protocol.CredentialCreation, string, error) {
	inv, err := s.st.InvitationBySecret(ctx, secret)
	if err != nil {
		return "", nil, "", err
	}
	handle := make([]byte, 32)
	if _, err := rand.Read(handle); err != nil {
		return "", nil, "", fmt.Errorf("passkey: %w", err)
	}
	w := &waUser{u: tenancy.User{Email: inv.Email, Name: inv.Email}, handle: handle}
	creation, session, err := s.wa.BeginRegistration(w)
	if err != nil {
		return "", nil, "", fmt.Errorf("passkey: begin registration: %w", err)
	}
	data, err := json.Marshal(invitationCeremony{Session: *session, Invitation: inv.ID, Handle: handle})
	if err != nil {
		return "", nil, "", fmt.Errorf("passkey: ceremony: %w", err)
	}
	id, err := s.st.SaveCeremony(ctx, store.CeremonyInvite, "", data, s.ttl)
	if err != nil {
		return "", nil, "", err
	}
	return id, creation, inv.Email, nil
}

// FinishInvitation verifies the authenticator's answer to an invitation's
// ceremony and, at once, accepts the invitation: the invited person becomes
// a user of the tenant with the invitation's roles and this passkey. The
// ceremony must be the same invitation's; the invitation is used once.
func (s *Service) FinishInvitation(ctx context.Context, secret, ceremonyID, name string, response []byte) (tenancy.User, store.Passkey, error) {
	if strings.TrimSpace(name) == "" {
		return tenancy.User{}, store.Passkey{}, fmt.Errorf("%w: a passkey needs a name", tenancy.ErrInvalid)
	}
	_, data, err := s.st.TakeCeremony(ctx, ceremonyID, store.CeremonyInvite)
	if err != nil {
		return tenancy.User{}, store.Passkey{}, err
	}
	var ic invitationCeremony
	if err := json.Unmarshal(data, &ic); err != nil {
		return tenancy.User{}, store.Passkey{}, fmt.Errorf("passkey: ceremony: %w", err)
	}
	inv, err := s.st.InvitationBySecret(ctx, secret)
	if err != nil {
		return tenancy.User{}, store.Passkey{}, err
	}
	if inv.ID != ic.Invitation {
		return tenancy.User{}, store.Passkey{}, fmt.Errorf("%w: the passkey ceremony is another invitation's", tenancy.ErrUnauthenticated)
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return tenancy.User{}, store.Passkey{}, refused("passkey registration", err)
	}
	w := &waUser{u: tenancy.User{Email: inv.Email, Name: inv.Email}, handle: ic.Handle}
	cred, err := s.wa.CreateCredential(w, ic.Session, parsed)
	if err != nil {
		return tenancy.User{}, store.Passkey{}, refused("passkey registration", err)
	}
	cdata, err := json.Marshal(cred)
	if err != nil {
		return tenancy.User{}, store.Passkey{}, fmt.Errorf("passkey: %w", err)
	}
	return s.st.AcceptInvitationWithPasskey(ctx, secret, ic.Handle,
		store.NewPasskey{Name: name, CredentialID: cred.ID, Credential: cdata, SignCount: cred.Authenticator.SignCount})
}
