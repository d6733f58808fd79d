package httpapi

import (
	"strings"

	"github.com/testcampaign/kit/sandbox"
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
		if !sandbox.IsKeyByte(s[i]) {
			return false
		}
	}
	return true
}

// ParseAuthorization returns the test key carried by an Authorization header
// value, or an INVALID_API_KEY error whose message says what is wrong with it.
func ParseAuthorization(header string) (string, error) {
	if header == "" {
		return "", sandbox.Errorf(sandbox.ErrInvalidAPIKey, "missing Authorization header; send Authorization: Bearer svc_test_<secret>")
	}
	scheme, key, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", sandbox.Errorf(sandbox.ErrInvalidAPIKey, "Authorization header must use the Bearer scheme")
	}
	key = strings.TrimSpace(key)
	switch {
	case key == "":
		return "", sandbox.Errorf(sandbox.ErrInvalidAPIKey, "API key is empty")
	case strings.HasPrefix(key, sandbox.LiveKeyPrefix):
		return "", sandbox.Errorf(sandbox.ErrInvalidAPIKey, "live keys are not accepted by the sandbox; use a %s key", sandbox.TestKeyPrefix)
	case !strings.HasPrefix(key, sandbox.TestKeyPrefix):
		return "", sandbox.Errorf(sandbox.ErrInvalidAPIKey, "API key %s has an unknown prefix; test keys start with %s", sandbox.KeyHint(key), sandbox.TestKeyPrefix)
	}
	secret := strings.TrimPrefix(key, sandbox.TestKeyPrefix)
	if !validSecret(secret) {
		return "", sandbox.Errorf(sandbox.ErrInvalidAPIKey,
			"API key %s is malformed: after %s it needs 1 to 128 characters of A-Z, a-z, 0-9, _ and -", sandbox.KeyHint(key), sandbox.TestKeyPrefix)
	}
	if strings.HasPrefix(secret, expiredSecretPrefix) {
		return "", sandbox.Errorf(sandbox.ErrInvalidAPIKey, "API key %s has expired", sandbox.KeyHint(key))
	}
	return key, nil
}
