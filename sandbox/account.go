package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// API key prefixes.
const (
	TestKeyPrefix = "svc_test_"
	LiveKeyPrefix = "svc_live_"
)

// expiredSecretPrefix marks test keys that simulate an expired key, so that
// clients can exercise their expiry handling.
const expiredSecretPrefix = "expired"

// maxSecretLength bounds the part of a test key after its prefix.
const maxSecretLength = 128

// validSecret reports whether s is 1 to 128 characters of A-Z, a-z, 0-9, _
// and -: checked on every request, so a loop rather than a regexp.
func validSecret(s string) bool {
	if len(s) == 0 || len(s) > maxSecretLength {
		return false
	}
	for i := range len(s) {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Account is the isolated world of one test key. Its ID is derived from the
// key, so the key itself never needs to be kept.
type Account struct {
	ID      string
	KeyHint string
}

// AccountKey identifies the account of a key without keeping the key.
type AccountKey [16]byte

// KeyOf returns the AccountKey of a test key.
func KeyOf(key string) AccountKey {
	sum := sha256.Sum256([]byte(key))
	return AccountKey(sum[:16])
}

// AccountForKey returns the account that a valid test key owns.
func AccountForKey(key string) Account {
	id := KeyOf(key)
	return Account{ID: hex.EncodeToString(id[:]), KeyHint: KeyHint(key)}
}

// ParseAuthorization returns the test key carried by an Authorization header
// value, or an INVALID_API_KEY error whose message says what is wrong with it.
func ParseAuthorization(header string) (string, error) {
	if header == "" {
		return "", Errorf(ErrInvalidAPIKey, "missing Authorization header; send Authorization: Bearer svc_test_<secret>")
	}
	scheme, key, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", Errorf(ErrInvalidAPIKey, "Authorization header must use the Bearer scheme")
	}
	key = strings.TrimSpace(key)
	switch {
	case key == "":
		return "", Errorf(ErrInvalidAPIKey, "API key is empty")
	case strings.HasPrefix(key, LiveKeyPrefix):
		return "", Errorf(ErrInvalidAPIKey, "live keys are not accepted by the sandbox; use a %s key", TestKeyPrefix)
	case !strings.HasPrefix(key, TestKeyPrefix):
		return "", Errorf(ErrInvalidAPIKey, "API key %s has an unknown prefix; test keys start with %s", KeyHint(key), TestKeyPrefix)
	}
	secret := strings.TrimPrefix(key, TestKeyPrefix)
	if !validSecret(secret) {
		return "", Errorf(ErrInvalidAPIKey,
			"API key %s is malformed: after %s it needs 1 to 128 characters of A-Z, a-z, 0-9, _ and -", KeyHint(key), TestKeyPrefix)
	}
	if strings.HasPrefix(secret, expiredSecretPrefix) {
		return "", Errorf(ErrInvalidAPIKey, "API key %s has expired", KeyHint(key))
	}
	return key, nil
}

// KeyHint is the most of a key that may be shown: its prefix and, for keys
// long enough that it gives nothing away, its last four characters.
func KeyHint(key string) string {
	prefix := ""
	for _, p := range []string{TestKeyPrefix, LiveKeyPrefix} {
		if strings.HasPrefix(key, p) {
			prefix = p
		}
	}
	secret := key[len(prefix):]
	if len(secret) < 12 {
		return prefix + "…"
	}
	return prefix + "…" + secret[len(secret)-4:]
}
