package api_test

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

// softAuthenticator (a copy of host/passkey's) is a software authenticator written from the WebAuthn
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
type softAuthenticator struct {
	origin, rpID string
	creds        []*softCred
}

type softCred struct {
	id         []byte
	key        *ecdsa.PrivateKey
	userHandle []byte
	counter    uint32
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (a *softAuthenticator) authData(flags byte, counter uint32, attested []byte) []byte {
	rp := sha256.Sum256([]byte(a.rpID))
	out := append([]byte{}, rp[:]...)
	out = append(out, flags)
	out = binary.BigEndian.AppendUint32(out, counter)
	return append(out, attested...)
}

func (a *softAuthenticator) clientData(t *testing.T, typ, challenge string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": a.origin, "crossOrigin": false})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// create answers navigator.credentials.create: challenge is the options'
// challenge (base64url), userHandle the options' user.id.
func (a *softAuthenticator) create(t *testing.T, challenge string, userHandle []byte) ([]byte, *softCred) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c := &softCred{id: make([]byte, 32), key: key, userHandle: userHandle}
	rand.Read(c.id)
	x, y := make([]byte, 32), make([]byte, 32)
	key.PublicKey.X.FillBytes(x)
	key.PublicKey.Y.FillBytes(y)
	cose, err := webauthncbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: x, -3: y})
	if err != nil {
		t.Fatal(err)
	}
	attested := make([]byte, 16) // AAGUID of zeros: "none" attestation
	attested = binary.BigEndian.AppendUint16(attested, uint16(len(c.id)))
	attested = append(attested, c.id...)
	attested = append(attested, cose...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": a.authData(0x01|0x04|0x40, 0, attested)})
	if err != nil {
		t.Fatal(err)
	}
	a.creds = append(a.creds, c)
	return softJSON(t, map[string]any{
		"id": b64(c.id), "rawId": b64(c.id), "type": "public-key", "authenticatorAttachment": "platform",
		"response": map[string]any{
			"clientDataJSON":    b64(a.clientData(t, "webauthn.create", challenge)),
			"attestationObject": b64(att),
			"transports":        []string{"internal"},
		},
		"clientExtensionResults": map[string]any{},
	}), c
}

// get answers navigator.credentials.get with credential c, counting up.
func (a *softAuthenticator) get(t *testing.T, c *softCred, challenge string) []byte {
	t.Helper()
	c.counter++
	return a.assert(t, c, challenge, c.counter, nil)
}

// assert signs an assertion with an explicit counter; tamper, when set,
// changes the signed bytes' signature after signing (a forgery).
func (a *softAuthenticator) assert(t *testing.T, c *softCred, challenge string, counter uint32, tamper func(sig []byte) []byte) []byte {
	t.Helper()
	auth := a.authData(0x01|0x04, counter, nil)
	cd := a.clientData(t, "webauthn.get", challenge)
	h := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, auth...), h[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, c.key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	if tamper != nil {
		sig = tamper(sig)
	}
	return softJSON(t, map[string]any{
		"id": b64(c.id), "rawId": b64(c.id), "type": "public-key", "authenticatorAttachment": "platform",
		"response": map[string]any{
			"clientDataJSON":    b64(cd),
			"authenticatorData": b64(auth),
			"signature":         b64(sig),
			"userHandle":        b64(c.userHandle),
		},
		"clientExtensionResults": map[string]any{},
	})
}

func softJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
