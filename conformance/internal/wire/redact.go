package wire

import (
	"bytes"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/testcampaign/kit/conformance/kit"
)

// RedactKey shows an API key as its type prefix and last four characters,
// which is enough to tell keys apart in a report without revealing them.
func RedactKey(key string) string {
	prefix := ""
	for _, p := range []string{kit.LivePrefix, kit.TestPrefix} {
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
	return redactions.of(key).spellings
}

// Fragments are the parts of key that show more of it than its hint (AUTH-6:
// no answer repeats a key beyond its prefix and last four characters): its
// prefix with the first four characters of its secret, in every spelling
// Spellings knows, and every run of twelve characters of a secret long
// enough to hold one apart from its last four. A run of one repeated
// character is left out: it says nothing of the key, and padding shows it.
func Fragments(key string) []string {
	return redactions.of(key).fragments
}

// fragmentRun is the length of a run of a secret that gives it away.
const fragmentRun = 12

func fragments(key string) []string {
	prefix := ""
	for _, p := range []string{kit.LivePrefix, kit.TestPrefix} {
		if strings.HasPrefix(key, p) {
			prefix = p
		}
	}
	secret := key[len(prefix):]
	if prefix == "" || len(secret) <= 4 {
		return nil
	}
	// Each is looked for in every answer: a spelling the escapes leave
	// alike, or a run the secret repeats, is kept once.
	seen := map[string]bool{}
	var out []string
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, u := range escapes['_'] {
		for _, h := range escapes['-'] {
			add(spell(prefix+secret[:4], u, h))
		}
	}
	if len(secret) < fragmentRun+4 {
		return out
	}
	for i := 0; i+fragmentRun <= len(secret); i++ {
		if run := secret[i : i+fragmentRun]; strings.Count(run, run[:1]) < fragmentRun {
			add(run)
		}
	}
	return out
}

// redaction is what Spellings and Redactor work out for one key, kept
// since every answer and every report line asks again.
type redaction struct {
	spellings []string
	fragments []string
	replacer  *strings.Replacer
}

// maxCachedKeys bounds the keys whose redaction is kept: a run meets a few
// hundred keys at once (the operator's, each scenario's fresh account's,
// each exploration's), and `conform explore` makes fresh ones without end,
// so a key past the bound is worked out again when it comes back.
const maxCachedKeys = 512

var redactions = redactionCache{byKey: map[string]*redaction{}}

// redactionCache keeps the redactions of the most recently first seen
// keys, forgetting the oldest once it holds maxCachedKeys.
type redactionCache struct {
	mu    sync.Mutex
	byKey map[string]*redaction
	order []string // keys in the order they were first seen
}

func (c *redactionCache) of(key string) *redaction {
	c.mu.Lock()
	r, ok := c.byKey[key]
	c.mu.Unlock()
	if ok {
		return r
	}
	sp := spellings(key)
	shown := RedactKey(key)
	pairs := make([]string, 0, 2*len(sp))
	for _, s := range sp {
		pairs = append(pairs, s, shown)
	}
	r = &redaction{spellings: sp, fragments: fragments(key), replacer: strings.NewReplacer(pairs...)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kept, ok := c.byKey[key]; ok {
		return kept
	}
	if len(c.order) == maxCachedKeys {
		delete(c.byKey, c.order[0])
		c.order = append(c.order[:0], c.order[1:]...)
	}
	c.byKey[key] = r
	c.order = append(c.order, key)
	return r
}

func spellings(key string) []string {
	secret := key
	for _, p := range []string{kit.LivePrefix, kit.TestPrefix} {
		secret = strings.TrimPrefix(secret, p)
	}
	bases := []string{key}
	if len(secret) >= 8 && secret != key {
		bases = append(bases, secret)
	}
	if len(secret) >= 10 {
		// A cut-short secret of one repeated character says nothing of
		// the key, and padding in a path would show it as the key.
		if cut := secret[:len(secret)-4]; strings.Count(cut, cut[:1]) < len(cut) {
			bases = append(bases, cut)
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, b := range bases {
		for _, u := range escapes['_'] {
			for _, h := range escapes['-'] {
				v := spell(b, u, h)
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

// spell writes b with its underscores as u and its hyphens as h. A
// strings.Replacer would do, at a cost that each fresh key pays a hundred
// times over.
func spell(b, u, h string) string {
	var out strings.Builder
	out.Grow(len(b) + 8*(len(u)+len(h)))
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '_':
			out.WriteString(u)
		case '-':
			out.WriteString(h)
		default:
			out.WriteByte(b[i])
		}
	}
	return out.String()
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
	return redactions.of(secret).replacer.Replace
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

// NewRedactingWriter writes to w with every spelling of secret redacted.
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
