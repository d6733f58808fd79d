package sandbox

import (
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
// into a path, a query, a header, a cookie or a body is never repeated whole.
// A key is recognised by what it means, not by how it is spelt: a value that
// spells one with escapes (svc%5Ftest_…, svc\u005ftest_…, escaped twice or
// more) is returned unescaped, with the key redacted; one escaped too deeply
// to unescape is replaced whole.
func RedactKeys(s string) string {
	// Three byte searches, not ContainsAny, which builds a set of its
	// characters on every call: this runs for every request's path.
	if !strings.Contains(s, "svc_") && strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '\\') < 0 {
		return s
	}
	unescaped, ok := unescapeAll(s)
	if !ok {
		return tooDeeplyEscaped
	}
	if unescaped == s || !strings.Contains(unescaped, "svc_") {
		// Unescaping leaves a plain key as it is, so without one
		// unescaped there is none in s either.
		return redactPlainKeys(s)
	}
	if redacted := redactPlainKeys(unescaped); redacted != unescaped {
		return redacted
	}
	return s
}

// HasKey reports whether s holds key, whole, in any spelling RedactKeys
// recognises: as it is, or escaped.
func HasKey(s, key string) bool {
	if key == "" || !strings.Contains(s, "svc_") && !strings.ContainsAny(s, `%\`) {
		return false
	}
	if hasWhole(s, key) {
		return true
	}
	unescaped, _ := unescapeAll(s)
	return hasWhole(unescaped, key)
}

// hasWhole reports whether key appears in s as a whole key: not the start
// of a longer one.
func hasWhole(s, key string) bool {
	for {
		i := strings.Index(s, key)
		if i < 0 {
			return false
		}
		s = s[i+len(key):]
		if s == "" || !IsKeyByte(s[0]) {
			return true
		}
	}
}

// tooDeeplyEscaped stands for a value escaped more times than RedactKeys
// undoes: no client's real value is.
const tooDeeplyEscaped = "(a value escaped too deeply to show)"

// maxUnescapes is how many rounds of unescaping RedactKeys undoes.
const maxUnescapes = 16

// unescapeAll undoes percent-escapes and JSON \uXXXX escapes, round after
// round, until nothing changes; false if that takes more than maxUnescapes
// rounds.
func unescapeAll(s string) (string, bool) {
	for range maxUnescapes {
		next := unescapeOnce(s)
		if next == s {
			return s, true
		}
		s = next
	}
	return s, unescapeOnce(s) == s
}

// unescapeOnce undoes every well-formed %XX and \uXXXX escape of s and
// leaves anything else as it is, unlike url.QueryUnescape, which refuses a
// whole string for one bad escape.
func unescapeOnce(s string) string {
	var out strings.Builder
	from := 0
	for i := 0; i < len(s); i++ {
		var r rune
		var n int
		switch {
		case s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			r, n = rune(unhex(s[i+1])<<4|unhex(s[i+2])), 3
		case s[i] == '\\' && i+5 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') && isHex(s[i+2]) && isHex(s[i+3]) && isHex(s[i+4]) && isHex(s[i+5]):
			r, n = rune(unhex(s[i+2])<<12|unhex(s[i+3])<<8|unhex(s[i+4])<<4|unhex(s[i+5])), 6
		default:
			continue
		}
		if out.Len() == 0 {
			out.Grow(len(s))
		}
		out.WriteString(s[from:i])
		if n == 3 {
			out.WriteByte(byte(r))
		} else {
			out.WriteRune(r)
		}
		i += n - 1
		from = i + 1
	}
	if from == 0 {
		return s
	}
	out.WriteString(s[from:])
	return out.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) int {
	switch {
	case c <= '9':
		return int(c - '0')
	case c <= 'F':
		return int(c-'A') + 10
	}
	return int(c-'a') + 10
}

// redactPlainKeys replaces every key spelt as it is, without escapes, with
// its hint. Keys written one against another are one run of key bytes,
// replaced by one hint.
func redactPlainKeys(s string) string {
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
		if end == at+len(prefix) {
			// A prefix alone hides nothing, and is how a hint starts:
			// redacting what is redacted changes nothing.
			out.WriteString(prefix)
		} else {
			out.WriteString(KeyHint(s[at:end]))
		}
		s = s[end:]
	}
}

// IsKeyByte reports whether c may appear in the secret of a test key.
func IsKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}
