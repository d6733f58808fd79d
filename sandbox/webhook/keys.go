package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// Keys holds the server secret that everything a receiver sees of an
// account is derived with. Without it, webhook secrets and Webhook-Ids
// would be plain hashes of the API key: anyone who knows a key could
// compute them, and a receiver could search a short key out of one
// Webhook-Id.
type Keys struct {
	secret []byte
}

// NewKeys returns the keys of a server secret. An empty secret is replaced
// with 32 random bytes, so that nothing derived from it can be computed
// outside this process; a set one lets a fleet of sandboxes, or runs that
// keep golden files, derive the same values.
func NewKeys(secret string) Keys {
	if secret != "" {
		return Keys{secret: []byte(secret)}
	}
	return Keys{secret: []byte(rand.Text() + rand.Text())}
}

// Identity is what an account's webhook secrets and Webhook-Ids are derived
// from: the HMAC-SHA256, under the server secret, of the account's ID and
// how many times it has been reset. It is unique per key and changes with
// every reset (whose events are numbered afresh), and it reveals nothing of
// the key to whoever lacks the server secret.
func (k Keys) Identity(accountID string, resets int) string {
	mac := hmac.New(sha256.New, k.secret)
	mac.Write([]byte(accountID))
	mac.Write([]byte{0})
	mac.Write([]byte(strconv.Itoa(resets)))
	return hex.EncodeToString(mac.Sum(nil))
}
