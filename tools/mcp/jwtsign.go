package mcp

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"time"
)

// signingKey is a client's private key for private_key_jwt client authentication. Its
// material never leaves it: errors name the file, never its contents.
type signingKey struct {
	signer crypto.Signer
	alg    string // ES256, ES384 or RS256
	kid    string
}

// assertionLifetime is how long a client assertion is valid: one token request.
const assertionLifetime = 2 * time.Minute

// loadSigningKey reads a PEM private key from path for alg (empty: the key type's).
func loadSigningKey(path, alg, kid string) (*signingKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf(`oauth "privateKeyFile": %w`, err)
	}
	var key any
	for rest := b; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		switch blk.Type {
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(blk.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
		default:
			continue
		}
		if err != nil {
			// The parser's words, not the bytes.
			return nil, fmt.Errorf(`oauth "privateKeyFile" %s: the %s block is not a valid key`, path, blk.Type)
		}
		break
	}
	if key == nil {
		return nil, fmt.Errorf(`oauth "privateKeyFile" %s: no PEM private key (PKCS #8, EC or RSA) in it`, path)
	}
	k := &signingKey{kid: kid}
	switch key := key.(type) {
	case *ecdsa.PrivateKey:
		k.signer = key
		want := map[string]string{"P-256": "ES256", "P-384": "ES384"}[key.Curve.Params().Name]
		if want == "" {
			return nil, fmt.Errorf(`oauth "privateKeyFile" %s: an EC key on %s; want P-256 (ES256) or P-384 (ES384)`, path, key.Curve.Params().Name)
		}
		if alg == "" {
			alg = want
		}
		if alg != want {
			return nil, fmt.Errorf(`oauth "signingAlgorithm" is %q, but the key in %s is for %s`, alg, path, want)
		}
	case *rsa.PrivateKey:
		k.signer = key
		if alg == "" {
			alg = "RS256"
		}
		if alg != "RS256" {
			return nil, fmt.Errorf(`oauth "signingAlgorithm" is %q, but the key in %s is an RSA key (RS256)`, alg, path)
		}
	default:
		return nil, fmt.Errorf(`oauth "privateKeyFile" %s: a %T key; want an EC (P-256, P-384) or RSA key`, path, key)
	}
	k.alg = alg
	return k, nil
}

// assertion returns a client assertion (RFC 7523 section 3) of clientID for the
// authorization server audience, valid from now for assertionLifetime.
func (k *signingKey) assertion(clientID, audience string, now time.Time) (string, error) {
	header := map[string]string{"alg": k.alg, "typ": "JWT"}
	if k.kid != "" {
		header["kid"] = k.kid
	}
	claims := map[string]any{"iss": clientID, "sub": clientID, "aud": audience, "jti": rand.Text(),
		"iat": now.Unix(), "exp": now.Add(assertionLifetime).Unix()}
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	sig, err := k.sign([]byte(input))
	if err != nil {
		return "", fmt.Errorf("signing the client assertion: %w", err)
	}
	return input + "." + enc.EncodeToString(sig), nil
}

// sign returns the JWS signature of input (RFC 7518 section 3): PKCS #1 v1.5 for RSA,
// the fixed-width r||s for ECDSA.
func (k *signingKey) sign(input []byte) ([]byte, error) {
	switch key := k.signer.(type) {
	case *rsa.PrivateKey:
		d := sha256.Sum256(input)
		return rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, d[:])
	case *ecdsa.PrivateKey:
		var digest []byte
		switch key.Curve {
		case elliptic.P256():
			d := sha256.Sum256(input)
			digest = d[:]
		case elliptic.P384():
			d := sha512.Sum384(input)
			digest = d[:]
		default:
			return nil, errors.New("unsupported curve")
		}
		r, s, err := ecdsa.Sign(rand.Reader, key, digest)
		if err != nil {
			return nil, err
		}
		size := (key.Curve.Params().BitSize + 7) / 8
		sig := make([]byte, 2*size)
		r.FillBytes(sig[:size])
		s.FillBytes(sig[size:])
		return sig, nil
	}
	return nil, fmt.Errorf("unsupported key %T", k.signer)
}
