package wire

import (
	"bytes"
	"io"
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

// Redactor replaces every whole occurrence of a secret in text.
func Redactor(secret string) func(string) string {
	if secret == "" {
		return func(s string) string { return s }
	}
	shown := RedactKey(secret)
	return func(s string) string { return strings.ReplaceAll(s, secret, shown) }
}

// RedactingWriter is the last line of defence for reports written by code we
// do not control (godog's formatters): the key is replaced in every write.
// Writes are buffered up to each newline so that a key split across two
// writes is still caught.
type RedactingWriter struct {
	mu     sync.Mutex
	w      io.Writer
	secret []byte
	shown  []byte
	buf    []byte
}

func NewRedactingWriter(w io.Writer, secret string) *RedactingWriter {
	return &RedactingWriter{w: w, secret: []byte(secret), shown: []byte(RedactKey(secret))}
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
	if len(r.secret) > 0 {
		b = bytes.ReplaceAll(b, r.secret, r.shown)
	}
	_, err := r.w.Write(b)
	return err
}
