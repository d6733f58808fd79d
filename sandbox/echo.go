package sandbox

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// MaxEchoRunes is how much of a client's value an error message, a log line
// or the request journal repeats: enough to recognise it, never a megabyte.
const MaxEchoRunes = 64

// CutMark ends a value that was cut to MaxEchoRunes.
const CutMark = "…(cut)"

// Echo is the form in which a client's value may be repeated back or logged:
// any API key in it redacted, and at most MaxEchoRunes characters of it,
// ending with CutMark when it was longer.
func Echo(s string) string {
	s = RedactKeys(s)
	if len(s) <= MaxEchoRunes {
		return s
	}
	cut, runes := 0, 0
	for cut < len(s) && runes < MaxEchoRunes {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
		runes++
	}
	if cut == len(s) {
		return s
	}
	return s[:cut] + CutMark
}

// keyPrefixes are the starts of the API keys RedactKeys looks for.
var keyPrefixes = []string{TestKeyPrefix, LiveKeyPrefix}

// RedactKeys replaces every API key in s with its KeyHint, so a key pasted
// into a path, a query or a body is never repeated whole.
func RedactKeys(s string) string {
	if !strings.Contains(s, "svc_") {
		return s
	}
	var out strings.Builder
	for {
		at, prefix := -1, ""
		for _, p := range keyPrefixes {
			if i := strings.Index(s, p); i >= 0 && (at < 0 || i < at) {
				at, prefix = i, p
			}
		}
		if at < 0 {
			out.WriteString(s)
			return out.String()
		}
		end := at + len(prefix)
		for end < len(s) && IsKeyByte(s[end]) {
			end++
		}
		out.WriteString(s[:at])
		out.WriteString(KeyHint(s[at:end]))
		s = s[end:]
	}
}

// RedactQueryKeys is RedactKeys for a raw query, which may also hold a key
// written with escapes (svc%5Ftest_...): such a query is returned unescaped,
// with the key redacted.
func RedactQueryKeys(raw string) string {
	redacted := RedactKeys(raw)
	if unescaped, err := url.QueryUnescape(raw); err == nil {
		if again := RedactKeys(unescaped); again != unescaped && redacted == raw {
			return again
		}
	}
	return redacted
}

// IsKeyByte reports whether c may appear in the secret of a test key.
func IsKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}
