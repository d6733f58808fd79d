package model

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// The exchanges below are as a sandbox with its clock frozen at start
// answers them, trimmed to what the model reads; each test has a sequence
// that keeps a rule and one, differing in as little as possible, that
// breaks it.

const trafficKey = "svc_test_model_traffic_0001"

var trafficNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ex is one exchange: "METHOD /target" sent with body, answered with
// status, headers written "Name: value; Name: value" (Remaining: N stands
// for the three rate-limit headers of a 1000-a-minute window) and answer.
type ex struct {
	req, body string
	status    int
	headers   string
	answer    string
	// dropped: no answer came, the connection was lost.
	dropped bool
}

// replay feeds the exchanges to a model that owns a fresh account seeded
// with nothing, and returns what it disagreed with, each with the index of
// its exchange.
func replay(t *testing.T, exchanges []ex) []string {
	t.Helper()
	seed := &Seed{next: map[string]int{"cmp": 1, "bug": 1, "tst": 1}}
	for i := range seed.Records {
		seed.Records[i] = map[string]map[string]any{}
	}
	m := New(kit.ProfileSandbox, kit.ContractSwitches{}, seed)
	m.Own(trafficKey, true)
	var found []string
	for i, e := range exchanges {
		method, target, _ := strings.Cut(e.req, " ")
		u, err := url.Parse(target)
		if err != nil {
			t.Fatalf("exchange %d: %v", i, err)
		}
		f := m.Begin(trafficKey)
		if e.dropped {
			m.Abandon(f, method, u.Path, u.RawQuery)
			continue
		}
		h := http.Header{"Date": {trafficNow.Format(http.TimeFormat)}}
		for _, kv := range strings.Split(e.headers, ";") {
			name, value, ok := strings.Cut(strings.TrimSpace(kv), ":")
			if !ok {
				continue
			}
			value = strings.TrimSpace(value)
			if name == "Remaining" {
				h.Set("X-RateLimit-Limit", "1000")
				h.Set("X-RateLimit-Reset", strconv.FormatInt(trafficNow.Add(time.Minute).Unix(), 10))
				h.Set("X-RateLimit-Scope", "key")
				if strings.HasPrefix(u.Path, "/_sandbox/") {
					h.Set("X-RateLimit-Scope", "controls")
				}
				name = "X-RateLimit-Remaining"
			}
			h.Set(name, value)
		}
		h.Set("Date", trafficNow.Format(http.TimeFormat))
		ex := &wire.Exchange{Method: method, URL: u.String(), ReqBody: []byte(e.body), Status: e.status, Header: h, Body: []byte(e.answer)}
		if e.body != "" {
			ex.ReqHeader = http.Header{"Content-Type": {"application/json"}}
		}
		for _, d := range m.Observe(f, ex) {
			found = append(found, fmt.Sprintf("%d: %s", i, d))
		}
	}
	return found
}

// trafficCase is a rule's pair of sequences.
type trafficCase struct {
	name          string
	keeps, breaks []ex
	// want is part of the disagreement the breaking sequence must give.
	want string
}

func checkTraffic(t *testing.T, tests []trafficCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if found := replay(t, tt.keeps); len(found) > 0 {
				t.Errorf("a sequence that keeps the rule: the model disagreed:\n%s", strings.Join(found, "\n"))
			}
			found := replay(t, tt.breaks)
			if len(found) == 0 || !strings.Contains(strings.Join(found, "\n"), tt.want) {
				t.Errorf("a sequence that breaks the rule: the model found %q, want a disagreement with %q", found, tt.want)
			}
		})
	}
}

// fault answers POST /_sandbox/faults with the fault's id.
func fault(n int, body string) ex {
	return ex{req: "POST /_sandbox/faults", body: body, status: 200, answer: fmt.Sprintf(`{"success":true,"data":{"id":"flt_%06d"}}`, n)}
}

func injected(status int, code string) string {
	return fmt.Sprintf(`{"success":false,"error":{"code":%q,"message":"failure injected","status":%d}}`, code, status)
}

const emptyList = `{"success":true,"data":{"items":[],"hasMore":false,"nextCursor":null}}`

func campaign(n int, name string) ex {
	return ex{
		req: "POST /v1/campaigns", body: fmt.Sprintf(`{"name":%q,"platform":"ios","testersRequired":1,"rewardPerBug":1}`, name), status: 200,
		answer: fmt.Sprintf(`{"success":true,"data":{"id":"cmp_%06d","name":%q,"platform":"ios","testersRequired":1,"rewardPerBug":1,"status":"draft","createdAt":"2026-01-01T00:00:00.000Z"}}`, n, name),
	}
}

// unanswered is a campaign's creation whose client got no answer.
func unanswered(name string) ex {
	return ex{req: "POST /v1/campaigns", body: fmt.Sprintf(`{"name":%q,"platform":"ios","testersRequired":1,"rewardPerBug":1}`, name), dropped: true}
}

func campaignItem(n int) string {
	return fmt.Sprintf(`{"id":"cmp_%06d","name":"c%d","platform":"ios","testersRequired":1,"rewardPerBug":1,"status":"draft","createdAt":"2026-01-01T00:00:00.000Z"}`, n, n)
}

func withRemaining(e ex, n int) ex {
	e.headers = strings.TrimPrefix(e.headers+"; Remaining: "+strconv.Itoa(n), "; ")
	return e
}

func TestModelFollowsPlannedFaults(t *testing.T) {
	t.Parallel()
	checkTraffic(t, []trafficCase{
		{
			name: "FAULT-26: a status fault for one method and path spends no budget",
			keeps: []ex{
				fault(1, `{"method":"POST","path":"/v1/campaigns","status":503}`),
				{req: "GET /v1/campaigns", status: 200, headers: "Remaining: 999", answer: emptyList},
				{req: "POST /v1/campaigns", body: `{"name":"Hit","platform":"ios","testersRequired":1,"rewardPerBug":1}`, status: 503,
					headers: "Remaining: 999; X-Sandbox-Fault: flt_000001; Retry-After: 1", answer: injected(503, "SERVICE_UNAVAILABLE")},
				withRemaining(campaign(1, "Real"), 998),
			},
			breaks: []ex{
				fault(1, `{"method":"POST","path":"/v1/campaigns","status":503}`),
				{req: "GET /v1/campaigns", status: 200, headers: "Remaining: 999", answer: emptyList},
				{req: "POST /v1/campaigns", body: `{"name":"Hit","platform":"ios","testersRequired":1,"rewardPerBug":1}`, status: 503,
					headers: "Remaining: 998; X-Sandbox-Fault: flt_000001; Retry-After: 1", answer: injected(503, "SERVICE_UNAVAILABLE")},
			},
			want: "the remaining count moves by exactly the requests counted",
		},
		{
			name: "FAULT-6, FAULT-7: a fault hits only the requests it matches",
			keeps: []ex{
				fault(1, `{"method":"GET","path":"/v1/bugs*","status":500}`),
				{req: "GET /v1/campaigns", status: 200, headers: "Remaining: 999", answer: emptyList},
				{req: "GET /v1/bugs", status: 500, headers: "Remaining: 999; X-Sandbox-Fault: flt_000001", answer: injected(500, "INTERNAL_ERROR")},
			},
			breaks: []ex{
				fault(1, `{"method":"GET","path":"/v1/bugs*","status":500}`),
				{req: "GET /v1/campaigns", status: 500, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001", answer: injected(500, "INTERNAL_ERROR")},
			},
			want: "hit only by the oldest planned fault that matches it",
		},
		{
			name: "FAULT-9, FAULT-10: planned faults stack, each hitting its count, the oldest first",
			keeps: []ex{
				fault(1, `{"status":500,"count":1}`),
				fault(2, `{"status":500,"count":1}`),
				{req: "GET /v1/testers", status: 500, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001", answer: injected(500, "INTERNAL_ERROR")},
				{req: "GET /v1/testers", status: 500, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000002", answer: injected(500, "INTERNAL_ERROR")},
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
			},
			breaks: []ex{
				fault(1, `{"status":500,"count":1}`),
				fault(2, `{"status":500,"count":1}`),
				{req: "GET /v1/testers", status: 500, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001", answer: injected(500, "INTERNAL_ERROR")},
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
			},
			want: "an answer from flt_000002",
		},
		{
			name: "FAULT-14, FAULT-26: an injected 429 carries its planned Retry-After and is not the key's limit",
			keeps: []ex{
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
				fault(1, `{"method":"GET","path":"/v1/testers","status":429,"retryAfter":7}`),
				{req: "GET /v1/testers", status: 429, headers: "Remaining: 999; X-Sandbox-Fault: flt_000001; Retry-After: 7", answer: injected(429, "RATE_LIMIT_EXCEEDED")},
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 998", answer: emptyList},
			},
			breaks: []ex{
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
				fault(1, `{"method":"GET","path":"/v1/testers","status":429,"retryAfter":7}`),
				{req: "GET /v1/testers", status: 429, headers: "Remaining: 999; X-Sandbox-Fault: flt_000001; Retry-After: 1", answer: injected(429, "RATE_LIMIT_EXCEEDED")},
			},
			want: "Retry-After: 7",
		},
		{
			name: "FAULT-15: retryAfter null plans an answer without Retry-After",
			keeps: []ex{
				fault(1, `{"status":503,"retryAfter":null}`),
				{req: "GET /v1/testers", status: 503, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001", answer: injected(503, "SERVICE_UNAVAILABLE")},
			},
			breaks: []ex{
				fault(1, `{"status":503,"retryAfter":null}`),
				{req: "GET /v1/testers", status: 503, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001; Retry-After: 1", answer: injected(503, "SERVICE_UNAVAILABLE")},
			},
			want: "none for null",
		},
		{
			name: "FAULT-16, FAULT-17: a status fault answers its planned headers and body",
			keeps: []ex{
				fault(1, `{"status":502,"headers":{"X-Upstream":"edge-7"},"body":"upstream timed out"}`),
				{req: "GET /v1/testers", status: 502, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001; X-Upstream: edge-7", answer: "upstream timed out"},
			},
			breaks: []ex{
				fault(1, `{"status":502,"headers":{"X-Upstream":"edge-7"},"body":"upstream timed out"}`),
				{req: "GET /v1/testers", status: 502, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001", answer: injected(502, "INJECTED_FAILURE")},
			},
			want: "FAULT-16",
		},
		{
			name: "FAULT-13, FAULT-28: a stubbed success before the API answers in its place and creates nothing",
			keeps: []ex{
				fault(1, `{"method":"POST","path":"/v1/campaigns","status":201,"body":"{\"success\":true,\"data\":{\"id\":\"cmp_000777\",\"status\":\"archived\"}}"}`),
				{req: "POST /v1/campaigns", body: `{"name":"Stub","platform":"ios","testersRequired":1,"rewardPerBug":1}`, status: 201,
					headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001", answer: `{"success":true,"data":{"id":"cmp_000777","status":"archived"}}`},
				withRemaining(campaign(1, "Real"), 999),
			},
			breaks: []ex{
				fault(1, `{"method":"POST","path":"/v1/campaigns","status":201,"body":"{\"success\":true,\"data\":{\"id\":\"cmp_000777\",\"status\":\"archived\"}}"}`),
				{req: "POST /v1/campaigns", body: `{"name":"Stub","platform":"ios","testersRequired":1,"rewardPerBug":1}`, status: 201,
					headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001", answer: `{"success":true,"data":{"id":"cmp_000777","status":"archived"}}`},
				withRemaining(campaign(2, "Real"), 999),
			},
			want: "cmp_000002",
		},
		{
			name: "FAULT-13: a stub planned without a body answers an empty one",
			keeps: []ex{
				fault(1, `{"method":"GET","path":"/v1/testers","status":200}`),
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001"},
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
			},
			breaks: []ex{
				fault(1, `{"method":"GET","path":"/v1/testers","status":200}`),
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001", answer: emptyList},
			},
			want: "a stub planned without a body answers an empty one",
		},
		{
			name: "FAULT-41: a stubbed success after the API is carried out and spends its unit",
			keeps: []ex{
				fault(1, `{"method":"POST","path":"/v1/campaigns","status":202,"phase":"after","body":"{\"queued\":true}"}`),
				{req: "POST /v1/campaigns", body: `{"name":"Stub","platform":"ios","testersRequired":1,"rewardPerBug":1}`, status: 202,
					headers: "Remaining: 999; X-Sandbox-Fault: flt_000001", answer: `{"queued":true}`},
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 998", answer: emptyList},
			},
			breaks: []ex{
				fault(1, `{"method":"POST","path":"/v1/campaigns","status":202,"phase":"after","body":"{\"queued\":true}"}`),
				{req: "POST /v1/campaigns", body: `{"name":"Stub","platform":"ios","testersRequired":1,"rewardPerBug":1}`, status: 202,
					headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001", answer: `{"queued":true}`},
			},
			want: "FAULT-41",
		},
		{
			name: "FAULT-26: a fault on an account's first request leaves it its whole window",
			keeps: []ex{
				fault(1, `{"path":"/v1/testers","status":500,"count":3}`),
				{req: "GET /v1/testers", status: 500, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001", answer: injected(500, "INTERNAL_ERROR")},
				{req: "GET /v1/campaigns", status: 200, headers: "Remaining: 999", answer: emptyList},
			},
			breaks: []ex{
				fault(1, `{"path":"/v1/testers","status":500,"count":3}`),
				{req: "GET /v1/testers", status: 500, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001", answer: injected(500, "INTERNAL_ERROR")},
				{req: "GET /v1/campaigns", status: 200, headers: "Remaining: 998", answer: emptyList},
			},
			want: "want X-RateLimit-Remaining 999",
		},
		{
			name: "FAULT-11: a fault with a rate may hit a matching request or not, never another",
			keeps: []ex{
				fault(1, `{"path":"/v1/testers","rate":0.5,"seed":7,"status":500}`),
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
				{req: "GET /v1/testers", status: 500, headers: "Remaining: 999; X-Sandbox-Fault: flt_000001", answer: injected(500, "INTERNAL_ERROR")},
				{req: "GET /v1/campaigns", status: 200, headers: "Remaining: 998", answer: emptyList},
			},
			breaks: []ex{
				fault(1, `{"path":"/v1/testers","rate":0.5,"seed":7,"status":500}`),
				{req: "GET /v1/campaigns", status: 500, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001", answer: injected(500, "INTERNAL_ERROR")},
			},
			want: "hit only by the oldest planned fault that matches it",
		},
		{
			name: "FAULT-28, JRNL-9: a request a reset drops changes nothing, and the journal has it without a status",
			keeps: []ex{
				fault(1, `{"method":"POST","path":"/v1/campaigns","network":"reset"}`),
				unanswered("Dropped"),
				{req: "GET /v1/campaigns", status: 200, headers: "Remaining: 999", answer: emptyList},
				{req: "GET /_sandbox/requests", status: 200, answer: `{"success":true,"data":{"items":[
					{"method":"GET","path":"/v1/campaigns","query":"","status":200,"fault":null},
					{"method":"POST","path":"/v1/campaigns","query":"","status":null,"fault":{"id":"flt_000001"}}],"hasMore":false,"nextCursor":null}}`},
			},
			breaks: []ex{
				fault(1, `{"method":"POST","path":"/v1/campaigns","network":"reset"}`),
				unanswered("Dropped"),
				{req: "GET /_sandbox/requests", status: 200, answer: `{"success":true,"data":{"items":[
					{"method":"POST","path":"/v1/campaigns","query":"","status":200,"fault":{"id":"flt_000001"}}],"hasMore":false,"nextCursor":null}}`},
			},
			want: "POST /v1/campaigns → no answer (fault flt_000001)",
		},
		{
			name: "FAULT-20, FAULT-26: a GET a close dropped, sent again by the client's HTTP stack, spends only its answer's unit",
			keeps: []ex{
				fault(1, `{"method":"GET","path":"/v1/testers","network":"close","count":2}`),
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
				{req: "GET /v1/campaigns", status: 200, headers: "Remaining: 998", answer: emptyList},
			},
			breaks: []ex{
				fault(1, `{"method":"GET","path":"/v1/testers","network":"close","count":2}`),
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
				{req: "GET /v1/campaigns", status: 200, headers: "Remaining: 997", answer: emptyList},
			},
			want: "want X-RateLimit-Remaining 998",
		},
		{
			name: "FAULT-9, FAULT-26: a GET a close dropped and the client sent again may meet the next fault",
			keeps: []ex{
				fault(1, `{"method":"GET","path":"/v1/campaigns","network":"close"}`),
				fault(2, `{"status":429,"count":2}`),
				{req: "GET /v1/campaigns", status: 429, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000002; Retry-After: 1", answer: injected(429, "RATE_LIMIT_EXCEEDED")},
				{req: "GET /v1/campaigns", status: 429, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000002; Retry-After: 1", answer: injected(429, "RATE_LIMIT_EXCEEDED")},
				{req: "GET /v1/campaigns", status: 200, headers: "Remaining: 999", answer: emptyList},
			},
			breaks: []ex{
				fault(1, `{"method":"GET","path":"/v1/campaigns","network":"close"}`),
				fault(2, `{"status":429,"count":2}`),
				{req: "GET /v1/campaigns", status: 429, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000002; Retry-After: 1", answer: injected(429, "RATE_LIMIT_EXCEEDED")},
				{req: "GET /v1/campaigns", status: 200, headers: "Remaining: 998", answer: emptyList},
			},
			want: "want X-RateLimit-Remaining 999",
		},
		{
			name: "FAULT-26: a status fault's answer carries the rate-limit headers as they stand",
			keeps: []ex{
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
				fault(1, `{"path":"/v1/testers","status":500}`),
				{req: "GET /v1/testers", status: 500, headers: "Remaining: 999; X-Sandbox-Fault: flt_000001", answer: injected(500, "INTERNAL_ERROR")},
			},
			breaks: []ex{
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
				fault(1, `{"path":"/v1/testers","status":500}`),
				{req: "GET /v1/testers", status: 500, headers: "X-Sandbox-Fault: flt_000001", answer: injected(500, "INTERNAL_ERROR")},
			},
			want: "FAULT-26 a fault's status or malformed answer carries the rate-limit headers",
		},
		{
			name: "FAULT-22: a malformed answer is a 200 with a JSON content type and a body that is not JSON",
			keeps: []ex{
				fault(1, `{"path":"/v1/testers","network":"malformed"}`),
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001; Content-Type: application/json", answer: "<html>502</html>"},
			},
			breaks: []ex{
				fault(1, `{"path":"/v1/testers","network":"malformed"}`),
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001; Content-Type: text/html", answer: "<html>502</html>"},
			},
			want: "FAULT-22",
		},
		{
			name: "FAULT-27, FAULT-29: a truncated request was carried out and counts, though its client saw no whole answer",
			keeps: []ex{
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
				fault(1, `{"method":"POST","path":"/v1/campaigns","network":"truncate"}`),
				unanswered("Cut"),
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 997", answer: emptyList},
			},
			breaks: []ex{
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
				fault(1, `{"method":"POST","path":"/v1/campaigns","network":"truncate"}`),
				unanswered("Cut"),
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 998", answer: emptyList},
			},
			want: "want X-RateLimit-Remaining 997",
		},
		{
			name: "FAULT-27: a truncate on an account's first request leaves the next answer one less than its whole window",
			keeps: []ex{
				fault(1, `{"method":"POST","path":"/v1/campaigns","network":"truncate"}`),
				unanswered("Cut"),
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 998", answer: emptyList},
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 997", answer: emptyList},
			},
			breaks: []ex{
				fault(1, `{"method":"POST","path":"/v1/campaigns","network":"truncate"}`),
				unanswered("Cut"),
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 998", answer: emptyList},
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 998", answer: emptyList},
			},
			want: "want X-RateLimit-Remaining 997",
		},
		{
			name: "FAULT-42: a request given up on during a delay before the API spends nothing",
			keeps: []ex{
				fault(1, `{"method":"POST","path":"/v1/campaigns","delayMs":5000}`),
				unanswered("Gone"),
				{req: "GET /v1/campaigns", status: 200, headers: "Remaining: 999", answer: emptyList},
				{req: "GET /_sandbox/requests", status: 200, answer: `{"success":true,"data":{"items":[
					{"method":"GET","path":"/v1/campaigns","query":"","status":200,"fault":null},
					{"method":"POST","path":"/v1/campaigns","query":"","status":null,"fault":{"id":"flt_000001"}}],"hasMore":false,"nextCursor":null}}`},
			},
			breaks: []ex{
				fault(1, `{"method":"POST","path":"/v1/campaigns","delayMs":5000}`),
				unanswered("Gone"),
				{req: "GET /v1/campaigns", status: 200, headers: "Remaining: 998", answer: emptyList},
			},
			want: "want X-RateLimit-Remaining 999 after its first request",
		},
		{
			name: "FAULT-30, FAULT-31, FAULT-32: the plan lists what is left, and clearing says how many it cleared",
			keeps: []ex{
				fault(1, `{"status":500,"count":2}`),
				fault(2, `{"status":503}`),
				{req: "GET /v1/testers", status: 500, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001", answer: injected(500, "INTERNAL_ERROR")},
				{req: "GET /_sandbox/faults", status: 200, answer: `{"success":true,"data":{"items":[{"id":"flt_000001","count":1,"fired":1},{"id":"flt_000002","count":1,"fired":0}],"hasMore":false,"nextCursor":null}}`},
				{req: "DELETE /_sandbox/faults", status: 200, answer: `{"success":true,"data":{"cleared":2}}`},
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
			},
			breaks: []ex{
				fault(1, `{"status":500,"count":2}`),
				fault(2, `{"status":503}`),
				{req: "GET /v1/testers", status: 500, headers: "Remaining: 1000; X-Sandbox-Fault: flt_000001", answer: injected(500, "INTERNAL_ERROR")},
				{req: "GET /_sandbox/faults", status: 200, answer: `{"success":true,"data":{"items":[{"id":"flt_000001","count":2,"fired":1},{"id":"flt_000002","count":1,"fired":0}],"hasMore":false,"nextCursor":null}}`},
			},
			want: "flt_000001 count 1",
		},
	})
}

const (
	notFound = `{"success":false,"error":{"code":"NOT_FOUND","message":"no such campaign","status":404}}`
	tooLong  = `{"success":false,"error":{"code":"URI_TOO_LONG","message":"the request target is longer than 8192 bytes","status":414}}`
)

// paddedTarget is a GET of an unknown campaign whose request target is
// size bytes long.
func paddedTarget(size int) string {
	const path = "/v1/campaigns/cmp_"
	return "GET " + path + strings.Repeat("0", size-len(path))
}

func TestModelJudgesTheRestOfAnyTraffic(t *testing.T) {
	t.Parallel()
	key := "svc_test_a_key_pasted_into_a_query_9876"
	checkTraffic(t, []trafficCase{
		{
			name: "JRNL-12: the journal shows a key in a query as its hint",
			keeps: []ex{
				{req: "GET /v1/testers?note=" + key, status: 200, headers: "Remaining: 999", answer: emptyList},
				{req: "GET /_sandbox/requests", status: 200, answer: `{"success":true,"data":{"items":[
					{"method":"GET","path":"/v1/testers","query":"note=svc_test_…9876","status":200,"fault":null}],"hasMore":false,"nextCursor":null}}`},
			},
			breaks: []ex{
				{req: "GET /v1/testers?note=" + key, status: 200, headers: "Remaining: 999", answer: emptyList},
				{req: "GET /_sandbox/requests", status: 200, answer: `{"success":true,"data":{"items":[
					{"method":"GET","path":"/v1/testers","query":"note=` + key + `","status":200,"fault":null}],"hasMore":false,"nextCursor":null}}`},
			},
			want: "only as its hint",
		},
		{
			name: "JRNL-13: a journal filtered by method and path holds the requests that match",
			keeps: []ex{
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
				{req: "GET /v1/bugs?limit=5", status: 200, headers: "Remaining: 998", answer: emptyList},
				{req: "HEAD /v1/bugs", status: 200, headers: "Remaining: 997; Content-Type: application/json"},
				{req: "GET /_sandbox/requests?method=GET&path=/v1/bugs*", status: 200, answer: `{"success":true,"data":{"items":[
					{"method":"GET","path":"/v1/bugs","query":"limit=5","status":200,"fault":null}],"hasMore":false,"nextCursor":null}}`},
			},
			breaks: []ex{
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
				{req: "GET /v1/bugs?limit=5", status: 200, headers: "Remaining: 998", answer: emptyList},
				{req: "HEAD /v1/bugs", status: 200, headers: "Remaining: 997; Content-Type: application/json"},
				{req: "GET /_sandbox/requests?method=GET&path=/v1/bugs*", status: 200, answer: `{"success":true,"data":{"items":[
					{"method":"HEAD","path":"/v1/bugs","query":"","status":200,"fault":null},
					{"method":"GET","path":"/v1/bugs","query":"limit=5","status":200,"fault":null}],"hasMore":false,"nextCursor":null}}`},
			},
			want: "want 1 from the newest: GET /v1/bugs?limit=5 → 200, got HEAD /v1/bugs",
		},
		{
			name: "JRNL-14: a journal filter no fault could take is refused",
			keeps: []ex{
				{req: "GET /_sandbox/requests?method=TRACE", status: 400, answer: `{"success":false,"error":{"code":"INVALID_PARAMETER","message":"method","status":400}}`},
				{req: "GET /_sandbox/requests?path=/campaigns", status: 400, answer: `{"success":false,"error":{"code":"INVALID_PARAMETER","message":"path","status":400}}`},
			},
			breaks: []ex{
				{req: "GET /_sandbox/requests?path=/v1/b*gs", status: 200, answer: emptyList},
			},
			want: "JRNL-14",
		},
		{
			name: "LIST-9: a campaign written between two pages does not shift the next page",
			keeps: []ex{
				withRemaining(campaign(1, "c1"), 999),
				withRemaining(campaign(2, "c2"), 998),
				withRemaining(campaign(3, "c3"), 997),
				{req: "GET /v1/campaigns?limit=2", status: 200, headers: "Remaining: 996",
					answer: `{"success":true,"data":{"items":[` + campaignItem(3) + `,` + campaignItem(2) + `],"hasMore":true,"nextCursor":"YzEuMg"}}`},
				withRemaining(campaign(4, "c4"), 995),
				{req: "GET /v1/campaigns?limit=2&cursor=YzEuMg", status: 200, headers: "Remaining: 994",
					answer: `{"success":true,"data":{"items":[` + campaignItem(1) + `],"hasMore":false,"nextCursor":null}}`},
			},
			breaks: []ex{
				withRemaining(campaign(1, "c1"), 999),
				withRemaining(campaign(2, "c2"), 998),
				withRemaining(campaign(3, "c3"), 997),
				{req: "GET /v1/campaigns?limit=2", status: 200, headers: "Remaining: 996",
					answer: `{"success":true,"data":{"items":[` + campaignItem(3) + `,` + campaignItem(2) + `],"hasMore":true,"nextCursor":"YzEuMg"}}`},
				withRemaining(campaign(4, "c4"), 995),
				{req: "GET /v1/campaigns?limit=2&cursor=YzEuMg", status: 200, headers: "Remaining: 994",
					answer: `{"success":true,"data":{"items":[` + campaignItem(2) + `,` + campaignItem(1) + `],"hasMore":false,"nextCursor":null}}`},
			},
			want: "want [cmp_000001]",
		},
		{
			name: "ROUTE-3: a path with a trailing slash is an unknown route",
			keeps: []ex{
				{req: "GET /v1/campaigns/", status: 404, headers: "Remaining: 999", answer: `{"success":false,"error":{"code":"NOT_FOUND","message":"no route","status":404}}`},
			},
			breaks: []ex{
				{req: "GET /v1/campaigns/", status: 200, headers: "Remaining: 999", answer: emptyList},
			},
			want: "unknown route",
		},
		{
			name: "ERR-20: a target over 8 KiB is refused before any account sees it",
			keeps: []ex{
				{req: paddedTarget(8193), status: 414, answer: tooLong},
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
				{req: paddedTarget(8192), status: 404, headers: "Remaining: 998", answer: notFound},
				{req: "GET /_sandbox/requests", status: 200, answer: `{"success":true,"data":{"items":[
					{"method":"GET","path":"` + strings.TrimPrefix(paddedTarget(8192), "GET ") + `","query":"","status":404,"fault":null},
					{"method":"GET","path":"/v1/testers","query":"","status":200,"fault":null}],"hasMore":false,"nextCursor":null}}`},
			},
			breaks: []ex{
				{req: paddedTarget(8193), status: 404, headers: "Remaining: 999", answer: notFound},
			},
			want: "over 8 KiB is refused",
		},
		{
			name: "ERR-20: a target of 8 KiB is read",
			keeps: []ex{
				{req: paddedTarget(8192), status: 404, headers: "Remaining: 999", answer: notFound},
			},
			breaks: []ex{
				{req: paddedTarget(8192), status: 414, answer: tooLong},
			},
			want: "8 KiB or less is read",
		},
		{
			name: "RATE-15: a per-client budget's 429 is not the key's",
			keeps: []ex{
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
				{req: "GET /v1/testers", status: 429, headers: "X-RateLimit-Scope: client; Retry-After: 30; Date: Thu, 01 Jan 2026 00:00:30 GMT",
					answer: `{"success":false,"error":{"code":"RATE_LIMIT_EXCEEDED","message":"this address has sent 60000 requests this minute","status":429}}`},
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 998", answer: emptyList},
				{req: "GET /_sandbox/requests", status: 200, answer: `{"success":true,"data":{"items":[
					{"method":"GET","path":"/v1/testers","query":"","status":200,"fault":null},
					{"method":"GET","path":"/v1/testers","query":"","status":200,"fault":null}],"hasMore":false,"nextCursor":null}}`},
			},
			breaks: []ex{
				{req: "GET /v1/testers", status: 200, headers: "Remaining: 999", answer: emptyList},
				{req: "GET /v1/testers", status: 429, headers: "X-RateLimit-Scope: key; Remaining: 999; Retry-After: 30",
					answer: `{"success":false,"error":{"code":"RATE_LIMIT_EXCEEDED","message":"rate limit exceeded","status":429}}`},
			},
			want: "a request within the limit is not refused",
		},
	})
}
