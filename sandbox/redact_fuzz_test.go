package sandbox

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// The oracle of the redactor: a client's value read as any consumer might
// read it, every %XX and \uXXXX escape undone, round after round.
var fuzzEscape = regexp.MustCompile(`%[0-9A-Fa-f]{2}|\\[uU][0-9A-Fa-f]{4}`)

func fuzzUnescapeAll(s string) string {
	for range 64 {
		next := fuzzEscape.ReplaceAllStringFunc(s, func(e string) string {
			var r rune
			if e[0] == '%' {
				fmt.Sscanf(e[1:], "%2x", &r)
				return string([]byte{byte(r)})
			}
			fmt.Sscanf(e[2:], "%4x", &r)
			return string(r)
		})
		if next == s {
			break
		}
		s = next
	}
	return s
}

// fuzzSpell writes key with each byte spelt as spelling picks, two bits a
// byte: as it is, %XX, %xx or \u00XX; then escapes the escapes rounds times,
// as a value escaped twice or more is.
func fuzzSpell(key string, spelling uint64, rounds int) string {
	var b strings.Builder
	for i := range len(key) {
		c := key[i]
		switch spelling >> (2 * (i % 32)) & 3 {
		case 0:
			b.WriteByte(c)
		case 1:
			fmt.Fprintf(&b, "%%%02X", c)
		case 2:
			fmt.Fprintf(&b, "%%%02x", c)
		case 3:
			fmt.Fprintf(&b, `\u%04x`, c)
		}
	}
	spelt := b.String()
	for range rounds {
		spelt = strings.NewReplacer("%", "%25", `\`, "%5C").Replace(spelt)
	}
	return spelt
}

// fuzzSecret keeps the bytes of raw a key may hold, and makes it long enough
// that its hint shows a tail and the rest is worth hiding.
func fuzzSecret(raw string) string {
	var b strings.Builder
	for i := range len(raw) {
		if IsKeyByte(raw[i]) {
			b.WriteByte(raw[i])
		}
	}
	secret := b.String()
	if len(secret) < 16 {
		secret += "Zq7-x0_Yk3Wm9Vb2"[len(secret):]
	}
	return secret
}

func FuzzRedactKeysFindsAKeyInAnySpelling(f *testing.F) {
	f.Add("0123456789abcdef", "GET /v1/campaigns?q=", "&x=1", uint64(0), uint8(0))
	f.Add("0123456789abcdef", `{"name":"`, `"}`, uint64(0x0c), uint8(0))
	f.Add("0123456789abcdef", "session=", "; theme=dark", uint64(0xaaaa), uint8(1))
	f.Add("0123456789abcdef", "/v1/campaigns/", "", uint64(0x30), uint8(2))
	f.Add("abcdefghijklmnop", "a=svc_test_another-key-0000&b=", "", uint64(0x3c), uint8(0))
	f.Add("x", "%", `\`, ^uint64(0), uint8(4))
	f.Fuzz(func(t *testing.T, rawSecret, before, after string, spelling uint64, rounds uint8) {
		if len(before)+len(after) > 4096 {
			return
		}
		secret := fuzzSecret(rawSecret)
		key := TestKeyPrefix + secret
		// The spaces keep before and after from running into the key's
		// escapes or its bytes: what is around a key is not what hides it.
		hidden := before + " " + fuzzSpell(key, spelling, int(rounds%5)) + " " + after
		out := RedactKeys(hidden)
		if strings.Contains(fuzzUnescapeAll(out), secret) {
			t.Fatalf("RedactKeys(%q) = %q, which spells the key %q", hidden, out, key)
		}
		// A value that spells no key in any way comes out as it went in.
		plain := before + " " + after
		if !strings.Contains(fuzzUnescapeAll(plain), "svc_") && RedactKeys(plain) != plain {
			t.Fatalf("RedactKeys(%q) = %q, a value with no key changed", plain, RedactKeys(plain))
		}
	})
}

func TestRedactKeysFindsDisguisedKeys(t *testing.T) {
	const key = "svc_test_0123456789abcdef"
	for _, disguised := range []string{
		"q=svc_test_0123456789abcdef&k=svc%5Ftest%5F0123456789abcdef",
		"k=svc%5Ftest%5F0123456789abcdef&q=svc_test_0123456789abcdef",
		"session=svc%5Ftest_0123456789abcdef; theme=dark",
		`{"name":"svc\u005ftest\u005f0123456789abcdef"}`,
		`{"name":"svc\u005Ftest_0123456789abcdef","x":"%zz"}`,
		"/v1/campaigns/svc%255Ftest%255F0123456789abcdef",
		"/v1/campaigns/%2573vc_test_0123456789abcdef",
		"svc_test_0123456789abcdefsvc_test_fedcba9876543210",
		"%25252525252525252525252525252525252525255F" + key,
	} {
		out := RedactKeys(disguised)
		if strings.Contains(fuzzUnescapeAll(out), "0123456789abcdef") {
			t.Errorf("RedactKeys(%q) = %q, which still spells the key", disguised, out)
		}
	}
	for _, plain := range []string{"/v1/campaigns/cmp_000001", "q=caf%C3%A9&x=%zz", `{"name":"caf\u00e9"}`} {
		if out := RedactKeys(plain); out != plain {
			t.Errorf("RedactKeys(%q) = %q, changed a value without a key", plain, out)
		}
	}
}

func TestRedactingTwiceChangesNothing(t *testing.T) {
	for _, s := range []string{"q=svc_test_0123456789abcdef", "svc%5Ftest_0123456789abcdef", "a=svc_test_xy.z", "svc_test_"} {
		once := RedactKeys(s)
		if twice := RedactKeys(once); twice != once {
			t.Errorf("RedactKeys(%q) = %q, and again %q", s, once, twice)
		}
	}
}
