package httpapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/netip"
	"testing"
	"time"
)

// slogLine is what slog's own handler writes for l: the request log's
// format before it was written by hand.
func slogLine(t testing.TB, l *requestLine, json bool) string {
	var out bytes.Buffer
	opts := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			a.Value = slog.TimeValue(l.at)
		}
		return a
	}}
	var h slog.Handler = slog.NewTextHandler(&out, opts)
	if json {
		h = slog.NewJSONHandler(&out, opts)
	}
	slog.New(h).LogAttrs(context.Background(), slog.LevelInfo, "request", l.attrs()...)
	return out.String()
}

// checkHandWritten checks that NewLogHandler's handler writes l as slog's
// does, or leaves it to slog, writing nothing.
func checkHandWritten(t *testing.T, name string, l *requestLine) {
	t.Helper()
	for _, json := range []bool{false, true} {
		var out bytes.Buffer
		if !NewLogHandler(&out, json).(*logHandler).writeRequest(l) {
			if out.Len() > 0 {
				t.Errorf("%s, json %v: left to slog, but wrote %s", name, json, out.String())
			}
			continue
		}
		if want := slogLine(t, l, json); out.String() != want {
			t.Errorf("%s, json %v:\n got %s\nwant %s", name, json, out.String(), want)
		}
	}
}

func TestHandWrittenRequestLinesAreSlogs(t *testing.T) {
	at := time.Date(2026, 3, 14, 15, 9, 26, 535_897_932, time.FixedZone("", -7*3600))
	plain := requestLine{at: at, method: "GET", path: "/v1/campaigns/cmp_000001", status: 200, duration: 1234567 * time.Nanosecond,
		client: netip.MustParseAddr("127.0.0.1"), key: "svc_test_…6789"}
	lines := map[string]requestLine{"plain": plain}
	for name, change := range map[string]func(*requestLine){
		"no key":             func(l *requestLine) { l.key = "" },
		"UTC, whole second":  func(l *requestLine) { l.at = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) },
		"IPv6 client":        func(l *requestLine) { l.client = netip.MustParsePrefix("2001:db8::7/64").Masked().Addr() },
		"no client":          func(l *requestLine) { l.client = netip.Addr{} },
		"a zone":             func(l *requestLine) { l.client = netip.MustParseAddr("fe80::1%eth 0") },
		"a space":            func(l *requestLine) { l.path = "/v1/camp aigns" },
		"an equals sign":     func(l *requestLine) { l.path = "/v1/a=b" },
		"a quote":            func(l *requestLine) { l.path = `/v1/"x"` },
		"a backslash":        func(l *requestLine) { l.path = `/v1/a\b` },
		"a control":          func(l *requestLine) { l.path = "/v1/\x01\x7f" },
		"invalid UTF-8":      func(l *requestLine) { l.path = "/v1/\xff" },
		"a line separator":   func(l *requestLine) { l.path = "/v1/\u2028" },
		"a wide space":       func(l *requestLine) { l.path = "/v1/\u3000" },
		"HTML":               func(l *requestLine) { l.path = "/v1/<b>&amp;" },
		"not ASCII":          func(l *requestLine) { l.path = "/v1/caf\u00e9/\U0001F600" },
		"an empty method":    func(l *requestLine) { l.method = "" },
		"a long duration":    func(l *requestLine) { l.duration = 90 * time.Minute },
		"no duration":        func(l *requestLine) { l.duration = 0 },
		"a status of 0":      func(l *requestLine) { l.status = 0 },
		"a key hint of text": func(l *requestLine) { l.key = "svc_test_…" },
	} {
		l := plain
		change(&l)
		lines[name] = l
	}
	for name, l := range lines {
		checkHandWritten(t, name, &l)
	}
	// The lines of most requests are written by hand, not left to slog.
	for _, name := range []string{"plain", "no key", "UTC, whole second", "IPv6 client", "HTML", "not ASCII", "a long duration", "a status of 0"} {
		l := lines[name]
		if !NewLogHandler(io.Discard, false).(*logHandler).writeRequest(&l) {
			t.Errorf("%s: left to slog", name)
		}
	}
}

func FuzzHandWrittenRequestLinesAreSlogs(f *testing.F) {
	f.Add("GET", "/v1/campaigns/cmp_000001", "svc_test_…6789", "127.0.0.1", 200, int64(1234567), int64(0))
	f.Add("PATCH", "/v1/bugs/a b", "", "::1", 404, int64(0), int64(1_700_000_000_123_456_789))
	f.Add("GET", "/v1/\u2028", "svc_test_…", "fe80::1%x", 500, int64(-5), int64(-62135596800_000_000_0))
	f.Fuzz(func(t *testing.T, method, path, key, client string, status int, duration, unixNano int64) {
		addr, _ := netip.ParseAddr(client)
		l := requestLine{at: time.Unix(0, unixNano), method: method, path: path, status: status,
			duration: time.Duration(duration), client: addr, key: key}
		if y := l.at.Year(); y < 0 || y >= 10000 {
			// slog's JSON handler writes an error instead of such a time;
			// the request log only ever has now.
			return
		}
		checkHandWritten(t, "fuzzed", &l)
	})
}

// Every duration a request can take is spelt as Duration.String spells it:
// each unit's edges, and a spread of values between, digits and zeros.
func TestDurationsAreSpeltAsDurationStringSpellsThem(t *testing.T) {
	var durations []time.Duration
	for _, edge := range []time.Duration{0, time.Nanosecond, time.Microsecond, time.Millisecond, time.Second, time.Minute} {
		for delta := time.Duration(-3); delta <= 3; delta++ {
			durations = append(durations, edge+delta, -(edge + delta))
		}
	}
	for d := time.Duration(1); d < 2*time.Second; d = d*3/2 + 7 {
		durations = append(durations, d, d-d%10, d-d%1000, d-d%100_000)
	}
	for _, d := range durations {
		if got := string(appendDuration([]byte("x"), d)); got != "x"+d.String() {
			t.Errorf("appendDuration(%d) = %q, want %q", int64(d), got[1:], d.String())
		}
	}
}

// TestTimesOfOneHandlerAreEachTheirOwn writes lines one after another, in
// the same second, the next, another zone and back, through one handler,
// whose cache of the second must not leak from one line into the next.
func TestTimesOfOneHandlerAreEachTheirOwn(t *testing.T) {
	at := time.Date(2026, 3, 14, 15, 9, 26, 5_000_000, time.UTC)
	east := time.FixedZone("", 5*3600+30*60)
	times := []time.Time{at, at.Add(990 * time.Millisecond), at.Add(time.Second), at.Add(time.Second).In(east),
		at.Add(time.Second + 7), at.Add(time.Hour).In(east), at.Add(time.Hour)}
	for _, json := range []bool{false, true} {
		var out bytes.Buffer
		h := NewLogHandler(&out, json).(*logHandler)
		for _, when := range times {
			out.Reset()
			l := requestLine{at: when, method: "GET", path: "/healthz", status: 200, client: netip.MustParseAddr("127.0.0.1")}
			if !h.writeRequest(&l) {
				t.Fatalf("%v: left to slog", when)
			}
			if want := slogLine(t, &l, json); out.String() != want {
				t.Errorf("json %v, %v:\n got %s\nwant %s", json, when, out.String(), want)
			}
		}
	}
}
