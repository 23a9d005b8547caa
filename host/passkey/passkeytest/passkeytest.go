// Package passkeytest is a software WebAuthn authenticator for tests: the
// cases a browser's virtual authenticator cannot produce (a forged
// signature, a replay, a counter that goes back, another origin).
package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
)

// Authenticator is a software authenticator written from the WebAuthn
// Level 3 specification (https://www.w3.org/TR/webauthn-3/), for the tests
// that a browser cannot run (a forged signature, a replay, a counter that
// goes back): §6.1 authenticator data (rpIdHash, flags UP 0x01, UV 0x04,
// AT 0x40, a big-endian 32-bit signature counter, attested credential data
// with a 16-byte AAGUID, a 16-bit credential id length, the id and the
// COSE_Key), §6.5.4 the attestation object ({"fmt","attStmt","authData"} in
// CBOR) with §8.7 "none" attestation, §5.8.1 the client data JSON the
// browser adds, §6.3.3 the assertion signature (ES256, DER, over authData
// || SHA-256(clientDataJSON)) and RFC 9053 §7.1 the EC2 COSE key (kty 2,
// alg -7, crv 1, x, y). It keeps resident credentials like a passkey
// provider: the user handle comes back in assertions.
type Authenticator struct {
	// Origin is what the client data names; RPID is hashed into the
	// authenticator data.
	Origin, RPID string
	creds        []*Credential
}

// Credential is one resident credential of the Authenticator.
type Credential struct {
	ID         []byte
	Key        *ecdsa.PrivateKey
	UserHandle []byte
	// Counter is the signature counter of the last assertion Get made.
	Counter uint32
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (a *Authenticator) authData(flags byte, counter uint32, attested []byte) []byte {
	rp := sha256.Sum256([]byte(a.RPID))
	out := append([]byte{}, rp[:]...)
	out = append(out, flags)
	out = binary.BigEndian.AppendUint32(out, counter)
	return append(out, attested...)
}

func (a *Authenticator) clientData(t testing.TB, typ, challenge string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": a.Origin, "crossOrigin": false})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Create answers navigator.credentials.create: challenge is the options'
// challenge (base64url), userHandle the options' user.id.
func (a *Authenticator) Create(t testing.TB, challenge string, userHandle []byte) ([]byte, *Credential) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c := &Credential{ID: make([]byte, 32), Key: key, UserHandle: userHandle}
	rand.Read(c.ID)
	// The uncompressed point: 0x04, then X and Y of 32 bytes each.
	pt, err := key.PublicKey.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	x, y := pt[1:33], pt[33:65]
	cose, err := webauthncbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: x, -3: y})
	if err != nil {
		t.Fatal(err)
	}
	attested := make([]byte, 16) // AAGUID of zeros: "none" attestation
	attested = binary.BigEndian.AppendUint16(attested, uint16(len(c.ID)))
	attested = append(attested, c.ID...)
	attested = append(attested, cose...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": a.authData(0x01|0x04|0x40, 0, attested)})
	if err != nil {
		t.Fatal(err)
	}
	a.creds = append(a.creds, c)
	return mustJSON(t, map[string]any{
		"id": b64(c.ID), "rawId": b64(c.ID), "type": "public-key", "authenticatorAttachment": "platform",
		"response": map[string]any{
			"clientDataJSON":    b64(a.clientData(t, "webauthn.create", challenge)),
			"attestationObject": b64(att),
			"transports":        []string{"internal"},
		},
		"clientExtensionResults": map[string]any{},
	}), c
}

// Get answers navigator.credentials.get with credential c, counting up.
func (a *Authenticator) Get(t testing.TB, c *Credential, challenge string) []byte {
	t.Helper()
	c.Counter++
	return a.Assert(t, c, challenge, c.Counter, nil)
}

// Assert signs an assertion with an explicit counter; tamper, when set,
// changes the signed bytes' signature after signing (a forgery).
func (a *Authenticator) Assert(t testing.TB, c *Credential, challenge string, counter uint32, tamper func(sig []byte) []byte) []byte {
	t.Helper()
	auth := a.authData(0x01|0x04, counter, nil)
	cd := a.clientData(t, "webauthn.get", challenge)
	h := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, auth...), h[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, c.Key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	if tamper != nil {
		sig = tamper(sig)
	}
	return mustJSON(t, map[string]any{
		"id": b64(c.ID), "rawId": b64(c.ID), "type": "public-key", "authenticatorAttachment": "platform",
		"response": map[string]any{
			"clientDataJSON":    b64(cd),
			"authenticatorData": b64(auth),
			"signature":         b64(sig),
			"userHandle":        b64(c.UserHandle),
		},
		"clientExtensionResults": map[string]any{},
	})
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
