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
