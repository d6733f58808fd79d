package sandbox

import (
	"encoding/json"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/http/httpguts"
)

// FuzzParseFaultSpec judges the fault decoder against the rules docs/controls.md
// gives a fault body, restated here.
func FuzzParseFaultSpec(f *testing.F) {
	for _, body := range []string{
		`{"status":500}`, `{"status":429,"count":3}`, `{"delayMs":250}`, `{"status":500,"count":1000,"delayMs":30000}`,
		`{"status":0,"delayMs":0}`, `{"status":404}`, `{"status":500,"count":0}`, `{"delayMs":30001}`,
		`{"status":"500"}`, `{"status":5e2}`, `{"count":2}`, `{}`, `{"status":null,"delayMs":null}`, `1`,
		`{"method":"POST","path":"/v1/campaigns","status":503,"retryAfter":2}`, `{"path":"/v1/bugs*","network":"reset"}`,
		`{"network":"trickle","trickleMs":500}`, `{"network":"truncate","trickleMs":5}`, `{"network":"malformed","status":500}`,
		`{"status":500,"rate":0.25,"seed":42}`, `{"status":500,"seed":42}`, `{"status":500,"rate":0}`, `{"status":500,"rate":1.5}`,
		`{"status":302}`, `{"status":302,"headers":{"location":"/v1/bugs"}}`, `{"status":200,"body":"{}"}`, `{"status":204,"body":""}`,
		`{"status":304,"phase":"after"}`, `{"status":300}`, `{"status":101}`, `{"status":400,"retryAfter":5}`, `{"path":"/_sandbox/reset","status":500}`, `{"path":"/v1/*/x","status":500}`,
		`{"method":"get","status":500}`, `{"stauts":500}`, `{"network":"close","delayMs":100,"count":5}`,
		`{"status":503,"retryAfter":0}`, `{"status":503,"retryAfter":null}`, `{"status":500,"retryAfter":"Wed, 21 Oct 2026 07:28:00 GMT"}`,
		`{"delayMs":5,"retryAfter":null}`, `{"status":503,"retryAfter":"soon"}`, `{"status":500,"headers":{"X-A":"1"},"body":"<h1>"}`,
		`{"status":500,"headers":{"Content-Length":"1"}}`, `{"status":500,"headers":{"X A":"1"}}`, `{"network":"close","body":""}`,
		`{"event":"*","webhook":"duplicate"}`, `{"event":"bug.created","webhook":"reorder","count":2}`,
		`{"event":"campaign.created","delayMs":5000}`, `{"event":"*","webhook":"badSignature","rate":0.5,"seed":9}`,
		`{"event":"bug.updated","webhook":"staleTimestamp","delayMs":100}`, `{"webhook":"duplicate"}`, `{"event":"*"}`,
		`{"event":"bug.deleted","webhook":"duplicate"}`, `{"event":"*","webhook":"twice"}`, `{"event":"*","webhook":"reorder","delayMs":10}`,
		`{"event":"*","webhook":"duplicate","status":500}`, `{"event":"*","delayMs":1,"retryAfter":null}`, `{"event":"*","delayMs":1,"status":null}`,
		`{"event":"*","webhook":"duplicate","method":"POST","path":"/v1/campaigns","network":"reset"}`, `{"event":null,"webhook":"duplicate"}`,
		`{"event":7,"webhook":"duplicate"}`, `{"event":"*","webhok":"duplicate"}`,
		`{"network":"reset","phase":"after"}`, `{"delayMs":5,"phase":"before"}`, `{"status":503,"phase":"later"}`,
		`{"event":"*","webhook":"duplicate","phase":"after"}`,
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fields := slices.Clone(faultFields)
		if obj, ok := fuzzFields(body); ok {
			for name := range maps.Keys(obj) {
				fields = append(fields, Echo(name))
			}
		}
		fuzzCheckDecoder(t, body, ParseFaultSpec, fields, fuzzFaultRefusals, func(spec FaultSpec, obj map[string]any) {
			if fuzzWebhookFault(obj) {
				want := FaultSpec{
					Event: fuzzString(obj, "event"), Webhook: fuzzString(obj, "webhook"), Count: 1, Rate: 1,
					DelayMS: fuzzNumber(obj, "delayMs"), Seed: uint64(fuzzNumber(obj, "seed")),
				}
				if fuzzPresent(obj, "rate") {
					want.Rate, _ = strconv.ParseFloat(string(obj["rate"].(json.Number)), 64)
					want.Count = 0
				}
				if fuzzPresent(obj, "count") {
					want.Count = int(fuzzNumber(obj, "count"))
				}
				if diff := cmp.Diff(want, spec); diff != "" {
					t.Fatalf("webhook fault is not what the body says (-want +got):\n%s", diff)
				}
				return
			}
			want := FaultSpec{
				Method: fuzzString(obj, "method"), Path: fuzzString(obj, "path"), Count: 1, Rate: 1,
				Status: int(fuzzNumber(obj, "status")), DelayMS: fuzzNumber(obj, "delayMs"),
				Network: fuzzString(obj, "network"), TrickleMS: fuzzNumber(obj, "trickleMs"), Seed: uint64(fuzzNumber(obj, "seed")),
			}
			if fuzzPresent(obj, "rate") {
				want.Rate, _ = strconv.ParseFloat(string(obj["rate"].(json.Number)), 64)
				want.Count = 0
			}
			if fuzzPresent(obj, "count") {
				want.Count = int(fuzzNumber(obj, "count"))
			}
			want.RetryAfter, want.RetryAfterHeader = fuzzRetryAfter(obj)
			if (want.Status == 429 || want.Status == 503) && want.RetryAfter == nil {
				want.RetryAfter, want.RetryAfterHeader = json.RawMessage("1"), "1"
			}
			if headers, ok := obj["headers"].(map[string]any); ok {
				want.Headers = map[string]string{}
				for name, value := range headers {
					want.Headers[name] = value.(string)
				}
			}
			if body, ok := obj["body"].(string); ok {
				want.Body = &body
			}
			if fuzzString(obj, "phase") == PhaseAfter {
				want.Phase = PhaseAfter
			}
			if want.Network == NetworkTrickle && want.TrickleMS == 0 {
				want.TrickleMS = 1000
			}
			if diff := cmp.Diff(want, spec); diff != "" {
				t.Fatalf("fault is not what the body says (-want +got):\n%s", diff)
			}
		})
	})
}

// fuzzFaultRefusals names the fields of a fault body that break its rules.
func fuzzFaultRefusals(obj map[string]any) []string {
	var bad []string
	for name := range obj {
		if !slices.Contains(faultFields, name) {
			bad = append(bad, Echo(name))
		}
	}
	if fuzzWebhookFault(obj) {
		return fuzzWebhookFaultRefusals(obj, bad)
	}
	status := int64(0)
	if fuzzInteger(obj["status"], 0, 599) {
		status = fuzzNumber(obj, "status")
	}
	network, _ := obj["network"].(string)
	if !fuzzOneOf(obj["network"], "reset", "close", "truncate", "malformed", "trickle") {
		network = ""
	}
	for _, rule := range []struct {
		field string
		ok    bool
	}{
		{"method", fuzzOneOf(obj["method"], "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")},
		{"path", fuzzPathPattern(obj["path"])},
		{"rate", fuzzRate(obj["rate"])},
		{"count", fuzzInteger(obj["count"], 1, 1000)},
		{"seed", fuzzInteger(obj["seed"], 0, 1<<53-1) && fuzzPresent(obj, "rate")},
		{"status", fuzzInteger(obj["status"], 0, 0) || fuzzInteger(obj["status"], 200, 299) || fuzzInteger(obj["status"], 400, 599) ||
			fuzzInteger(obj["status"], 301, 304) || fuzzInteger(obj["status"], 307, 308)},
		{"retryAfter", status != 0 && fuzzRetryAfterValue(obj["retryAfter"])},
		{"headers", status != 0 && fuzzHeaders(obj["headers"])},
		{"body", status != 0 && fuzzBody(obj["body"]) && status != 204 && status != 205 && status != 304},
		{"delayMs", fuzzInteger(obj["delayMs"], 0, 30000)},
		{"network", network != "" && status == 0},
		{"trickleMs", fuzzInteger(obj["trickleMs"], 1, 30000) && network == "trickle"},
		{"phase", fuzzOneOf(obj["phase"], "before", "after")},
	} {
		_, named := obj[rule.field]
		// A null retryAfter asks for no Retry-After: it is there.
		present := fuzzPresent(obj, rule.field) || rule.field == "retryAfter" && named
		if present && !rule.ok {
			bad = append(bad, rule.field)
		}
	}
	// A redirect says where to, in a Location header.
	if slices.Contains([]int64{301, 302, 303, 307, 308}, status) && !fuzzHasHeader(obj["headers"], "location") && !slices.Contains(bad, "headers") {
		bad = append(bad, "headers")
	}
	if len(bad) == 0 && status == 0 && fuzzNumber(obj, "delayMs") == 0 && network == "" {
		bad = append(bad, "status")
	}
	return bad
}

// fuzzHasHeader reports whether headers, an object, names the header lower
// in any case.
func fuzzHasHeader(headers any, lower string) bool {
	m, _ := headers.(map[string]any)
	for name := range m {
		if strings.ToLower(name) == lower {
			return true
		}
	}
	return false
}

// fuzzWebhookFault reports whether a body plans a webhook fault: one with
// an event or a webhook field that is not null.
func fuzzWebhookFault(obj map[string]any) bool {
	return fuzzPresent(obj, "event") || fuzzPresent(obj, "webhook")
}

// fuzzWebhookFaultRefusals names the known fields of a webhook fault body
// that break its rules: an event type (or "*") is required, webhook is
// one of its four, none of a request fault's answer may come along (a null
// one is absent, but for retryAfter), reorder takes no delay, and the fault
// must do something. bad are the unknown fields already named.
func fuzzWebhookFaultRefusals(obj map[string]any, bad []string) []string {
	webhook, _ := obj["webhook"].(string)
	if !fuzzOneOf(obj["webhook"], "duplicate", "reorder", "badSignature", "staleTimestamp") {
		webhook = ""
	}
	delayOK := fuzzInteger(obj["delayMs"], 0, 30000)
	for _, rule := range []struct {
		field string
		ok    bool
	}{
		{"event", fuzzOneOf(obj["event"], "campaign.created", "bug.created", "bug.updated", "*")},
		{"webhook", webhook != ""},
		{"rate", fuzzRate(obj["rate"])},
		{"count", fuzzInteger(obj["count"], 1, 1000)},
		{"seed", fuzzInteger(obj["seed"], 0, 1<<53-1) && fuzzPresent(obj, "rate")},
		{"delayMs", delayOK},
	} {
		present := fuzzPresent(obj, rule.field) || rule.field == "event"
		if present && !rule.ok {
			bad = append(bad, rule.field)
		}
	}
	for _, field := range []string{"method", "path", "status", "retryAfter", "headers", "body", "network", "trickleMs", "phase"} {
		if _, named := obj[field]; fuzzPresent(obj, field) || field == "retryAfter" && named {
			bad = append(bad, field)
		}
	}
	delay := int64(0)
	if delayOK {
		delay = fuzzNumber(obj, "delayMs")
	}
	if webhook == "reorder" && delay > 0 {
		bad = append(bad, "delayMs")
	}
	if len(bad) == 0 && webhook == "" && delay == 0 {
		bad = append(bad, "webhook")
	}
	return bad
}

// fuzzRetryAfterValue accepts seconds from 0 to 3600, an HTTP-date of at
// most 64 bytes, or null.
func fuzzRetryAfterValue(v any) bool {
	if date, ok := v.(string); ok {
		_, err := http.ParseTime(date)
		return err == nil && len(date) <= 64
	}
	return v == nil || fuzzInteger(v, 0, 3600)
}

// fuzzRetryAfter is the retryAfter a valid body plans, and its header.
func fuzzRetryAfter(obj map[string]any) (json.RawMessage, string) {
	v, named := obj["retryAfter"]
	switch v := v.(type) {
	case string:
		quoted, _ := json.Marshal(v)
		return quoted, v
	case json.Number:
		return json.RawMessage(v), string(v)
	}
	if named {
		return json.RawMessage("null"), ""
	}
	return nil, ""
}

// fuzzHeaders accepts at most 16 headers with names HTTP allows of at most
// 128 bytes, no two alike but for case, none that frames the message, none
// that a proxy acts on or that CORS sets, and string values of at most
// 1 KiB with no line break.
func fuzzHeaders(v any) bool {
	headers, ok := v.(map[string]any)
	if !ok || len(headers) > 16 {
		return false
	}
	seen := map[string]bool{}
	for name, value := range headers {
		s, ok := value.(string)
		lower := strings.ToLower(name)
		framing := slices.Contains([]string{"content-length", "transfer-encoding", "connection", "trailer", "keep-alive", "upgrade"}, lower)
		proxied := slices.ContainsFunc([]string{"x-accel-", "x-sendfile", "x-lighttpd-", "x-litespeed-", "x-envoy-", "access-control-"}, func(p string) bool { return strings.HasPrefix(lower, p) })
		if !ok || len(name) > 128 || seen[lower] || !httpguts.ValidHeaderFieldName(name) || framing || proxied || !httpguts.ValidHeaderFieldValue(s) || len(s) > 1024 {
			return false
		}
		seen[lower] = true
	}
	return true
}

func fuzzBody(v any) bool {
	s, ok := v.(string)
	return ok && len(s) <= 16<<10
}

// fuzzPathPattern accepts an API path of at most 256 bytes, or the start of
// one followed by a single "*"; no query.
func fuzzPathPattern(v any) bool {
	s, ok := v.(string)
	prefix := strings.TrimSuffix(s, "*")
	return ok && len(s) <= 256 && strings.HasPrefix(s, "/v1") && !strings.ContainsAny(prefix, "*?#")
}

// fuzzRate accepts a share of requests, as a float64 holds it: more than 0,
// at most 1.
func fuzzRate(v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	r, err := strconv.ParseFloat(string(n), 64)
	return err == nil && !math.IsNaN(r) && r > 0 && r <= 1
}

func fuzzString(obj map[string]any, name string) string {
	s, _ := obj[name].(string)
	return s
}

func fuzzNumber(obj map[string]any, name string) int64 {
	n, _ := obj[name].(json.Number)
	i, _ := strconv.ParseInt(string(n), 10, 64)
	return i
}
