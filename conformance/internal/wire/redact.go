package wire

import (
	"bytes"
	"io"
	"sort"
	"strings"
	"sync"
)

// Key prefixes the spec defines (section 5).
const (
	LivePrefix = "svc_live_"
	TestPrefix = "svc_test_"
)

// RedactKey shows an API key as its type prefix and last four characters,
// which is enough to tell keys apart in a report without revealing them.
func RedactKey(key string) string {
	prefix := ""
	for _, p := range []string{LivePrefix, TestPrefix} {
		if strings.HasPrefix(key, p) {
			prefix = p
			break
		}
	}
	secret := key[len(prefix):]
	if len(secret) <= 8 {
		// Four visible characters of a short secret would give away half of it.
		return prefix + "****"
	}
	return prefix + "…" + secret[len(secret)-4:]
}

// Spellings are the forms in which a report could show key, longest
// first: the key whole, its secret part (the key without its type prefix),
// and all of that secret but its last four characters (a key cut short);
// each also with its underscores and hyphens escaped as a URL or a JSON
// string escapes them. The leak detector looks for these in answers and
// every report is cleaned of them, so that a deployment echoing the key in
// a disguise it is caught for never gets the key printed either.
func Spellings(key string) []string {
	if v, ok := spellingsOf.Load(key); ok {
		return v.([]string)
	}
	out := spellings(key)
	spellingsOf.Store(key, out)
	return out
}

// spellingsOf and replacerOf keep what Spellings and Redactor work out for
// each key, since every answer and every report line asks again. A run
// meets a few hundred keys.
var spellingsOf, replacerOf sync.Map

func spellings(key string) []string {
	secret := key
	for _, p := range []string{LivePrefix, TestPrefix} {
		secret = strings.TrimPrefix(secret, p)
	}
	bases := []string{key}
	if len(secret) >= 8 && secret != key {
		bases = append(bases, secret)
	}
	if len(secret) >= 10 {
		bases = append(bases, secret[:len(secret)-4])
	}
	seen := map[string]bool{}
	var out []string
	for _, b := range bases {
		for _, u := range escapes['_'] {
			for _, h := range escapes['-'] {
				v := strings.NewReplacer("_", u, "-", h).Replace(b)
				if !seen[v] {
					seen[v] = true
					out = append(out, v)
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// escapes are the spellings of the key's two punctuation characters in a
// URL (percent-encoded, once or twice) and in a JSON string (\u escapes,
// and those escaped again as a JSON report of a JSON body shows them).
var escapes = map[byte][]string{
	'_': {"_", "%5F", "%5f", "%255F", "%255f", `\u005f`, `\u005F`, `\\u005f`, `\\u005F`},
	'-': {"-", "%2D", "%2d", `\u002d`, `\u002D`},
}

// Redactor replaces every spelling of a secret in text with its redacted
// form.
func Redactor(secret string) func(string) string {
	if secret == "" {
		return func(s string) string { return s }
	}
	if r, ok := replacerOf.Load(secret); ok {
		return r.(*strings.Replacer).Replace
	}
	r := strings.NewReplacer(pairs(secret)...)
	replacerOf.Store(secret, r)
	return r.Replace
}

// RedactAll replaces every spelling of each key in text.
func RedactAll(text string, keys ...string) string {
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, k := range keys {
		if len(k) >= 8 {
			text = Redactor(k)(text)
		}
	}
	return text
}

// pairs are the old, new pairs of a strings.Replacer that hides key: at
// each position it replaces the longest spelling that matches.
func pairs(key string) []string {
	shown := RedactKey(key)
	var p []string
	for _, s := range Spellings(key) {
		p = append(p, s, shown)
	}
	return p
}

// RedactingWriter is the last line of defence for reports written by code we
// do not control (godog's formatters): the key is replaced in every write.
// Writes are buffered up to each newline so that a key split across two
// writes is still caught.
type RedactingWriter struct {
	mu     sync.Mutex
	w      io.Writer
	redact func(string) string
	buf    []byte
}

func NewRedactingWriter(w io.Writer, secret string) *RedactingWriter {
	return &RedactingWriter{w: w, redact: Redactor(secret)}
}

func (r *RedactingWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, p...)
	i := bytes.LastIndexByte(r.buf, '\n')
	if i < 0 {
		return len(p), nil
	}
	if err := r.emit(r.buf[:i+1]); err != nil {
		return 0, err
	}
	r.buf = append(r.buf[:0], r.buf[i+1:]...)
	return len(p), nil
}

// Flush writes whatever is left after the last newline.
func (r *RedactingWriter) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.emit(r.buf)
	r.buf = r.buf[:0]
	return err
}

func (r *RedactingWriter) emit(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, err := io.WriteString(r.w, r.redact(string(b)))
	return err
}
