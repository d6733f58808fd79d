package httpapi

import (
	"io"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// NewLogHandler returns the handler of the sandbox's log: slog's text
// handler, or with json its JSON handler, writing to out. The request log,
// one line per request and most of what the sandbox writes, is appended by
// hand in the very format that handler would write: through slog it took
// about a tenth of the sandbox's CPU under load. A line with a value slog
// would quote or escape still goes through slog, which writes it.
func NewLogHandler(out io.Writer, json bool) slog.Handler {
	w := &lockedWriter{out: out}
	h := &logHandler{out: w, json: json}
	if json {
		h.Handler = slog.NewJSONHandler(w, nil)
	} else {
		h.Handler = slog.NewTextHandler(w, nil)
	}
	return h
}

// logHandler is slog's handler for every record but the request lines,
// which it writes itself through the same writer.
type logHandler struct {
	slog.Handler
	out     *lockedWriter
	json    bool
	seconds lastFormatted[logSecond, logSecondText]
}

// logSecond is a log line's time up to its seconds, in its zone.
type logSecond struct {
	unix int64
	loc  *time.Location
}

// logSecondText is a second as RFC 3339 writes it: the date and time, and
// the zone's offset.
type logSecondText struct{ date, zone string }

func (s logSecond) text() logSecondText {
	t := time.Unix(s.unix, 0).In(s.loc)
	return logSecondText{date: t.Format("2006-01-02T15:04:05"), zone: t.Format("Z07:00")}
}

// appendTime appends t as slog's text handler writes it, with milliseconds,
// cut, or as its JSON handler writes it, with nanoseconds, their trailing
// zeros trimmed. What goes before and after the fraction is formatted once
// a second, not once a line.
func (h *logHandler) appendTime(b []byte, t time.Time) []byte {
	second := h.seconds.get(logSecond{t.Unix(), t.Location()}, logSecond.text)
	b = append(b, second.date...)
	ns := t.Nanosecond()
	switch {
	case !h.json:
		b = append(b, '.', byte('0'+ns/1e8), byte('0'+ns/1e7%10), byte('0'+ns/1e6%10))
	case ns != 0:
		var digits [9]byte
		for i := len(digits) - 1; i >= 0; i-- {
			digits[i] = byte('0' + ns%10)
			ns /= 10
		}
		b = append(b, '.')
		b = append(b, strings.TrimRight(string(digits[:]), "0")...)
	}
	return append(b, second.zone...)
}

// lockedWriter lets slog's handler and the hand-written lines share one
// writer without their lines interleaving.
type lockedWriter struct {
	mu  sync.Mutex
	out io.Writer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(p)
}

// requestLine is what the request log says of one request.
type requestLine struct {
	at       time.Time
	method   string
	path     string
	status   int
	duration time.Duration
	client   netip.Addr
	// key is the key's hint, empty for a request without an account.
	key string
}

// attrs are the line's attributes as slog takes them, in the line's order.
func (l *requestLine) attrs() []slog.Attr {
	attrs := []slog.Attr{slog.String("method", l.method), slog.String("path", l.path),
		slog.Int("status", l.status), slog.Duration("duration", l.duration),
		slog.String("client", l.client.String())}
	if l.key != "" {
		attrs = append(attrs, slog.String("key", l.key))
	}
	return attrs
}

var lineBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// writeRequest writes the request's line, and reports false, writing
// nothing, when one of its values is one slog would quote or escape.
func (h *logHandler) writeRequest(l *requestLine) bool {
	buf := lineBuffers.Get().(*[]byte)
	defer lineBuffers.Put(buf)
	b, ok := h.appendRequest((*buf)[:0], l)
	if ok {
		_, _ = h.out.Write(b)
	}
	*buf = b
	return ok
}

func (h *logHandler) appendRequest(b []byte, l *requestLine) ([]byte, bool) {
	plain := true
	raw := func(key, value string) {
		b = appendKey(b, key, h.json)
		if h.json {
			b = append(b, '"')
		}
		b = append(b, value...)
		if h.json {
			b = append(b, '"')
		}
	}
	str := func(key, value string) {
		raw(key, value)
		plain = plain && isPlain(value)
	}
	if h.json {
		b = append(b, `{"time":"`...)
		b = h.appendTime(b, l.at)
		b = append(b, `","level":"INFO","msg":"request"`...)
	} else {
		b = append(b, "time="...)
		b = h.appendTime(b, l.at)
		b = append(b, " level=INFO msg=request"...)
	}
	str("method", l.method)
	str("path", l.path)
	b = appendKey(b, "status", h.json)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = appendKey(b, "duration", h.json)
	if h.json {
		b = strconv.AppendInt(b, int64(l.duration), 10)
	} else {
		b = appendDuration(b, l.duration)
	}
	b = appendKey(b, "client", h.json)
	if h.json {
		b = append(b, '"')
	}
	start := len(b)
	b = l.client.AppendTo(b)
	// An address is digits, dots, colons and hex, plain without a look;
	// an invalid one is "invalid IP", and a zone may hold anything.
	if !l.client.IsValid() || l.client.Zone() != "" {
		plain = plain && isPlain(string(b[start:]))
	}
	if h.json {
		b = append(b, '"')
	}
	if l.key != "" {
		// Plain by making, unchecked: a key's hint is its prefix, "…" and
		// the last characters of a key that ParseAuthorization held to
		// A-Z, a-z, 0-9, _ and -.
		raw("key", l.key)
	}
	if h.json {
		b = append(b, '}')
	}
	return append(b, '\n'), plain
}

func appendKey(b []byte, key string, json bool) []byte {
	if json {
		b = append(b, `,"`...)
		b = append(b, key...)
		return append(b, `":`...)
	}
	b = append(b, ' ')
	b = append(b, key...)
	return append(b, '=')
}

// isPlain reports whether slog writes s as it is, both in text, unquoted,
// and in JSON, unescaped between its quotes: not empty, and only printable
// characters other than space, '"', '\\' and '=', and other than the line
// and paragraph separators, which its JSON escapes.
func isPlain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c <= ' ' || c >= utf8.RuneSelf-1 || c == '"' || c == '\\' || c == '=' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || r == '\u2028' || r == '\u2029' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return false
		}
		i += size
	}
	return true
}

// appendDuration appends d as Duration.String spells it, without making the
// string: a request's duration, under a second, in ns, µs or ms with the
// fraction's trailing zeros dropped. Any other goes through String.
func appendDuration(b []byte, d time.Duration) []byte {
	var unit string
	var scale int64
	switch {
	case d <= 0 || d >= time.Second:
		return append(b, d.String()...)
	case d < time.Microsecond:
		return append(strconv.AppendInt(b, int64(d), 10), "ns"...)
	case d < time.Millisecond:
		unit, scale = "µs", int64(time.Microsecond)
	default:
		unit, scale = "ms", int64(time.Millisecond)
	}
	b = strconv.AppendInt(b, int64(d)/scale, 10)
	if fraction := int64(d) % scale; fraction != 0 {
		b = append(b, '.')
		for scale /= 10; fraction != 0; scale /= 10 {
			b = append(b, byte('0'+fraction/scale))
			fraction %= scale
		}
	}
	return append(b, unit...)
}
