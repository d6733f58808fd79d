package openapi_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/testcampaign/kit/openapi"
	"github.com/testcampaign/kit/openapi/document"
	"github.com/testcampaign/kit/openapi/internal/docjson"
	"github.com/testcampaign/kit/openapi/openapitest"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

func TestDocumentPassesDocumentValidation(t *testing.T) {
	for _, tt := range []struct {
		name string
		doc  []byte
	}{
		{"yaml", document.YAML()},
		{"json", document.JSON()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := openapi.Load(tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.Validate(); len(got) > 0 {
				t.Errorf("the document breaks the OpenAPI schema: %v", got)
			}
		})
	}
}

func TestValidateFindsABrokenDocument(t *testing.T) {
	v, err := openapi.Load([]byte("openapi: 3.1.0\ninfo: {title: broken}\npaths:\n  /x:\n    get:\n      responses: 200\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Validate(); len(got) == 0 {
		t.Error("Validate() found nothing wrong with a document without info.version and with a number for responses")
	}
}

func TestJSONIsRegeneratedFromYAML(t *testing.T) {
	want, err := docjson.FromYAML(document.YAML())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(document.JSON(), want) {
		t.Error("openapi.json is stale; run go generate ./openapi/document")
	}
}

func TestLoadRefusesWhatIsNotOpenAPI3(t *testing.T) {
	for _, doc := range []string{"", "not: [an, openapi, document]", `{"swagger": "2.0", "info": {"title": "x", "version": "1"}, "paths": {}}`} {
		if _, err := openapi.Load([]byte(doc)); err == nil {
			t.Errorf("Load(%q) succeeded, want an error", doc)
		}
	}
}

const (
	campaign = `{"id":"cmp_000001","name":"Beta","platform":"ios","testersRequired":5,"rewardPerBug":19.99,"status":"draft","createdAt":"2026-01-01T00:00:30.000Z"}`
	delivery = `{"id":"dlv_000001","webhookId":"whk_000001","eventId":"evt_000001","eventType":"bug.created","url":"http://127.0.0.1:9000/hooks","attempt":1,"at":"2026-01-01T00:00:30.000Z","statusCode":204,"error":"","nextAttemptAt":null,"fault":null}`
	notFound = `{"success":false,"error":{"code":"NOT_FOUND","message":"no route","status":404}}`
)

// exchange is one request and the answer to it.
type exchange struct {
	method, target, reqBody string
	status                  int
	header                  map[string]string
	resBody                 string
}

var limited = map[string]string{
	"Content-Type": "application/json", "X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": "999", "X-RateLimit-Reset": "1767225660",
}

func with(h map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(out, kv[i])
			continue
		}
		out[kv[i]] = kv[i+1]
	}
	return out
}

func TestCheck(t *testing.T) {
	v, err := openapi.Default()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		ex   exchange
		want []openapi.Violation
	}{
		{
			name: "a campaign as documented",
			ex:   exchange{"GET", "/v1/campaigns/cmp_000001", "", 200, limited, `{"success":true,"data":` + campaign + `}`},
		},
		{
			name: "a number sent as a string",
			ex: exchange{"GET", "/v1/campaigns/cmp_000001", "", 200, limited,
				`{"success":true,"data":` + strings.Replace(campaign, `"testersRequired":5`, `"testersRequired":"5"`, 1) + `}`},
			want: []openapi.Violation{{In: "response", Path: "$.data.testersRequired"}},
		},
		{
			name: "a timestamp without its three fractional digits",
			ex: exchange{"GET", "/v1/campaigns/cmp_000001", "", 200, limited,
				`{"success":true,"data":` + strings.Replace(campaign, "30.000Z", "30Z", 1) + `}`},
			want: []openapi.Violation{{In: "response", Path: "$.data.createdAt"}},
		},
		{
			name: "a missing rate-limit header",
			ex: exchange{"GET", "/v1/campaigns/cmp_000001", "", 200, with(limited, "X-RateLimit-Limit", ""),
				`{"success":true,"data":` + campaign + `}`},
			want: []openapi.Violation{{In: "response header", Path: "X-RateLimit-Limit"}},
		},
		{
			name: "an error code outside the enum",
			ex: exchange{"GET", "/v1/campaigns/cmp_404", "", 404, limited,
				`{"success":false,"error":{"code":"MISSING","message":"no such campaign","status":404}}`},
			want: []openapi.Violation{{In: "response", Path: "$.error.code"}},
		},
		{
			name: "a status the operation does not list",
			ex:   exchange{"GET", "/v1/campaigns/cmp_000001", "", 418, limited, `{"success":false}`},
			want: []openapi.Violation{{In: "response status", Path: "$"}},
		},
		{
			name: "a 503 planned with POST /_sandbox/faults",
			ex: exchange{"GET", "/v1/testers", "", 503, with(limited, "Retry-After", "2", "X-Sandbox-Fault", "flt_000001"),
				`{"success":false,"error":{"code":"INJECTED_FAILURE","message":"injected fault","status":503}}`},
		},
		{
			name: "the sandbox's own 429",
			ex: exchange{"GET", "/v1/testers", "", 429, with(limited, "Retry-After", "30"),
				`{"success":false,"error":{"code":"RATE_LIMIT_EXCEEDED","message":"rate limit exceeded","status":429}}`},
		},
		{
			name: "the sandbox's own 429 with an HTTP-date",
			ex: exchange{"GET", "/v1/testers", "", 429, with(limited, "Retry-After", "Wed, 21 Oct 2026 07:28:00 GMT"),
				`{"success":false,"error":{"code":"RATE_LIMIT_EXCEEDED","message":"rate limit exceeded","status":429}}`},
			want: []openapi.Violation{{In: "response headers", Path: "retry-after"}},
		},
		{
			name: "the sandbox's own 429 without Retry-After",
			ex: exchange{"GET", "/v1/testers", "", 429, limited,
				`{"success":false,"error":{"code":"RATE_LIMIT_EXCEEDED","message":"rate limit exceeded","status":429}}`},
			want: []openapi.Violation{{In: "response header", Path: "Retry-After"}},
		},
		{
			name: "a 429 planned with POST /_sandbox/faults, with an HTTP-date",
			ex: exchange{"GET", "/v1/testers", "", 429, with(limited, "Retry-After", "Wed, 21 Oct 2026 07:28:00 GMT", "X-Sandbox-Fault", "flt_000001"),
				`{"success":false,"error":{"code":"RATE_LIMIT_EXCEEDED","message":"injected fault","status":429}}`},
		},
		{
			name: "a 429 planned with POST /_sandbox/faults, without Retry-After",
			ex: exchange{"GET", "/v1/testers", "", 429, with(limited, "X-Sandbox-Fault", "flt_000001"),
				`{"success":false,"error":{"code":"RATE_LIMIT_EXCEEDED","message":"injected fault","status":429}}`},
		},
		{
			name: "a planned 404 on an operation that lists none",
			ex: exchange{"GET", "/v1/testers", "", 404, with(limited, "X-Sandbox-Fault", "flt_000001"),
				`{"success":false,"error":{"code":"NOT_FOUND","message":"injected fault","status":404}}`},
		},
		{
			name: "a planned 503 whose Retry-After is neither seconds nor a date",
			ex: exchange{"GET", "/v1/testers", "", 503, with(limited, "Retry-After", "soon", "X-Sandbox-Fault", "flt_000001"),
				`{"success":false,"error":{"code":"INJECTED_FAILURE","message":"injected fault","status":503}}`},
			want: []openapi.Violation{{In: "response headers", Path: "retry-after"}},
		},
		{
			name: "a planned 429 without the envelope",
			ex:   exchange{"GET", "/v1/testers", "", 429, with(limited, "X-Sandbox-Fault", "flt_000001"), `{"success":false}`},
			want: []openapi.Violation{{In: "response", Path: "$"}},
		},
		{
			name: "a delivery with its fault, null",
			ex:   exchange{"GET", "/_sandbox/deliveries", "", 200, limited, `{"success":true,"data":{"items":[` + delivery + `],"hasMore":false,"nextCursor":null}}`},
		},
		{
			name: "a delivery without its fault",
			ex: exchange{"GET", "/_sandbox/deliveries", "", 200, limited,
				`{"success":true,"data":{"items":[` + strings.Replace(delivery, `,"fault":null`, "", 1) + `],"hasMore":false,"nextCursor":null}}`},
			want: []openapi.Violation{{In: "response", Path: "$.data.items[0]"}},
		},
		{
			name: "a 5xx that does not say which fault answered",
			ex: exchange{"POST", "/v1/campaigns", `{"name":"Beta","platform":"ios","testersRequired":5,"rewardPerBug":19.99}`, 502, limited,
				`{"success":false,"error":{"code":"INJECTED_FAILURE","message":"injected fault","status":502}}`},
			want: []openapi.Violation{{In: "response header", Path: "X-Sandbox-Fault"}},
		},
		{
			name: "a refused request is not checked, its refusal is",
			ex: exchange{"POST", "/v1/campaigns", `{"name":""}`, 400, limited,
				`{"success":false,"error":{"code":"VALIDATION_ERROR","message":"3 invalid fields","status":400,"details":[{"field":"name","message":"must not be blank"}]}}`},
		},
		{
			name: "an accepted request that breaks the document",
			ex: exchange{"POST", "/v1/campaigns", `{"name":"Beta","platform":"ios","testersRequired":0,"rewardPerBug":19.99}`, 200, limited,
				`{"success":true,"data":` + campaign + `}`},
			want: []openapi.Violation{{In: "request", Path: "$.testersRequired"}},
		},
		{
			name: "an unknown path answered with the NotFound response",
			ex:   exchange{"GET", "/v1/nowhere", "", 404, limited, notFound},
		},
		{
			name: "an unknown path answered with a success",
			ex:   exchange{"GET", "/v1/nowhere", "", 200, limited, `{"success":true,"data":{}}`},
			want: []openapi.Violation{{In: "route", Path: "GET /v1/nowhere"}},
		},
		{
			name: "an unclean path that looks like a documented one answered with the NotFound response",
			ex:   exchange{"GET", "/v1/bugs/.", "", 404, limited, notFound},
		},
		{
			name: "an unclean path answered as the clean one would be",
			ex:   exchange{"GET", "/v1/campaigns/cmp_000001/", "", 200, limited, `{"success":true,"data":` + campaign + `}`},
			want: []openapi.Violation{{In: "route", Path: "GET /v1/campaigns/cmp_000001/"}},
		},
		{
			name: "an unknown path refused for its key first",
			ex: exchange{"GET", "/v1/nowhere", "", 401, map[string]string{"Content-Type": "application/json", "WWW-Authenticate": `Bearer realm="svc"`},
				`{"success":false,"error":{"code":"INVALID_API_KEY","message":"missing Authorization header","status":401}}`},
		},
		{
			name: "HEAD where GET is, answered with GET's headers",
			ex:   exchange{"HEAD", "/v1/campaigns/cmp_000001", "", 200, limited, ""},
		},
		{
			name: "HEAD where GET is, answered without rate-limit headers",
			ex:   exchange{"HEAD", "/v1/campaigns/cmp_000001", "", 200, with(limited, "X-RateLimit-Reset", ""), ""},
			want: []openapi.Violation{{In: "response header", Path: "X-RateLimit-Reset"}},
		},
		{
			name: "an overlong target refused before routing",
			ex: exchange{"GET", "/v1/" + strings.Repeat("a", 100), "", 414, map[string]string{"Content-Type": "application/json"},
				`{"success":false,"error":{"code":"URI_TOO_LONG","message":"too long","status":414}}`},
		},
		{
			name: "a wrong method answered without Allow",
			ex: exchange{"DELETE", "/v1/campaigns", "", 405, limited,
				`{"success":false,"error":{"code":"METHOD_NOT_ALLOWED","message":"DELETE is not allowed","status":405}}`},
			want: []openapi.Violation{{In: "response header", Path: "Allow"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.ex.method, tt.ex.target, strings.NewReader(tt.ex.reqBody))
			req.Header.Set("Authorization", "Bearer svc_test_0123456789")
			if tt.ex.reqBody != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			res := &http.Response{StatusCode: tt.ex.status, Header: http.Header{}, Request: req}
			for k, val := range tt.ex.header {
				res.Header.Set(k, val)
			}
			got := v.Check(req, []byte(tt.ex.reqBody), res, []byte(tt.ex.resBody))
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(openapi.Violation{}, "Want", "Message"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Check() violations (-want +got):\n%s\nall: %v", diff, got)
			}
			for _, violation := range got {
				if violation.Want == "" || violation.Message == "" {
					t.Errorf("violation %+v does not say what was wanted and why", violation)
				}
			}
		})
	}
}

// TestDriftTestFailsWhenTheDocumentChanges changes one field's type in a copy
// of the document and checks that the sandbox's own traffic then breaks it.
func TestDriftTestFailsWhenTheDocumentChanges(t *testing.T) {
	const from = "        testersRequired:\n          type: integer\n        rewardPerBug:\n          type: number\n          format: double\n          description: Returned"
	doc := string(document.YAML())
	if strings.Count(doc, from) != 1 {
		t.Fatal("the Campaign schema's testersRequired is not where the test expects it")
	}
	changed, err := openapi.Load([]byte(strings.Replace(doc, from, strings.Replace(from, "integer", "string", 1), 1)))
	if err != nil {
		t.Fatal(err)
	}
	var got []openapi.Violation
	h := openapitest.Checking(changed, sandboxtest.NewHandler(t, sandboxtest.Options{}), func(_ *http.Request, _ int, v openapi.Violation) {
		got = append(got, v)
	})
	req := httptest.NewRequest("GET", "/v1/campaigns/cmp_000001", nil)
	req.Header.Set("Authorization", "Bearer svc_test_0123456789")
	h.ServeHTTP(httptest.NewRecorder(), req)

	want := []openapi.Violation{{In: "response", Path: "$.data.testersRequired"}}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(openapi.Violation{}, "Want", "Message")); diff != "" {
		t.Errorf("violations against the changed document (-want +got):\n%s", diff)
	}
}

func TestSandboxServesTheDocumentWithoutAKey(t *testing.T) {
	h := sandboxtest.NewHandler(t, sandboxtest.Options{})
	for _, tt := range []struct {
		path, contentType, host string
		want                    []byte
	}{
		{"/openapi.json", "application/json", "127.0.0.1:41234", bytes.Replace(document.JSON(), []byte("http://127.0.0.1:8080"), []byte("http://127.0.0.1:41234"), 1)},
		{"/openapi.yaml", "application/yaml", "sandbox.internal", bytes.Replace(document.YAML(), []byte("http://127.0.0.1:8080"), []byte("http://sandbox.internal"), 1)},
		// A host that could break the document out of its string is not
		// repeated: the document's own address stays.
		{"/openapi.yaml", "application/yaml", `x"y`, document.YAML()},
	} {
		t.Run(tt.path+" "+tt.host, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", tt.path, nil)
			req.Host = tt.host
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s = %d, want 200: %s", tt.path, rec.Code, rec.Body)
			}
			if got := rec.Header().Get("Content-Type"); got != tt.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tt.contentType)
			}
			if got := rec.Header().Get("X-RateLimit-Limit"); got != "" {
				t.Errorf("X-RateLimit-Limit = %q, want none: the document is not rate-limited", got)
			}
			if !bytes.Equal(rec.Body.Bytes(), tt.want) {
				t.Errorf("GET %s with Host %s does not serve the embedded document with the address it reached", tt.path, tt.host)
			}
			if _, err := openapi.Load(rec.Body.Bytes()); err != nil {
				t.Errorf("the served document does not load: %v", err)
			}
		})
	}
}

func TestCheckWebhook(t *testing.T) {
	v, err := openapi.Default()
	if err != nil {
		t.Fatal(err)
	}
	const bug = `{"id":"bug_000001","campaignId":"cmp_000001","testerId":"tst_000001","title":"Crash","description":"","severity":"high","status":"new","resolution":null,"createdAt":"2026-01-01T00:00:30.000Z","updatedAt":"2026-01-01T00:00:30.000Z"}`
	signed := map[string]string{"Content-Type": "application/json", "Webhook-Id": "evt_000001", "Webhook-Timestamp": "1767225630",
		"Webhook-Signature": "v1=" + strings.Repeat("ab", 32)}
	tests := []struct {
		name, event string
		header      map[string]string
		body        string
		want        []openapi.Violation
	}{
		{
			name: "a delivery as documented", event: "bug.created", header: signed,
			body: `{"id":"evt_000001","type":"bug.created","createdAt":"2026-01-01T00:00:30.000Z","data":` + bug + `}`,
		},
		{
			name: "a bug with a severity outside the enum", event: "bug.created", header: signed,
			body: `{"id":"evt_000001","type":"bug.created","createdAt":"2026-01-01T00:00:30.000Z","data":` + strings.Replace(bug, `"high"`, `"urgent"`, 1) + `}`,
			want: []openapi.Violation{{In: "webhook", Path: "$.data.severity"}},
		},
		{
			name: "an unsigned delivery", event: "bug.created", header: with(signed, "Webhook-Signature", ""),
			body: `{"id":"evt_000001","type":"bug.created","createdAt":"2026-01-01T00:00:30.000Z","data":` + bug + `}`,
			want: []openapi.Violation{{In: "webhook header", Path: "Webhook-Signature"}},
		},
		{
			name: "an event type the document lacks", event: "bug.deleted", header: signed, body: `{}`,
			want: []openapi.Violation{{In: "webhook", Path: "bug.deleted"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "http://127.0.0.1:9000/hooks", strings.NewReader(tt.body))
			for k, val := range tt.header {
				req.Header.Set(k, val)
			}
			got := v.CheckWebhook(tt.event, req, []byte(tt.body))
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(openapi.Violation{}, "Want", "Message"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("CheckWebhook() violations (-want +got):\n%s\nall: %v", diff, got)
			}
		})
	}
}

func TestStrictReportsUndeclaredResponseFieldsOnly(t *testing.T) {
	extra := `{"success":true,"data":` + strings.Replace(campaign, `"status":"draft"`, `"status":"draft","colour":"red"`, 1) + `}`
	for _, tt := range []struct {
		name string
		opts []openapi.Option
		want []openapi.Violation
	}{
		{"by default", nil, nil},
		{"strict", []openapi.Option{openapi.Strict()}, []openapi.Violation{{In: "response undeclared-property", Path: "$.data.colour"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := openapi.Default(tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			body := `{"name":"Beta","platform":"ios","testersRequired":5,"rewardPerBug":19.99,"colour":"red"}`
			req := httptest.NewRequest("POST", "/v1/campaigns", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer svc_test_0123456789")
			req.Header.Set("Content-Type", "application/json")
			res := &http.Response{StatusCode: 200, Header: http.Header{}, Request: req}
			for k, val := range limited {
				res.Header.Set(k, val)
			}
			got := v.Check(req, []byte(body), res, []byte(extra))
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(openapi.Violation{}, "Want", "Message"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStrictAllowsUndeclaredRequestHeadersUnlessAsked(t *testing.T) {
	answer := `{"success":true,"data":` + strings.Replace(campaign, `"status":"draft"`, `"status":"draft","colour":"red"`, 1) + `}`
	undeclaredAnswer := openapi.Violation{In: "response undeclared-property", Path: "$.data.colour"}
	for _, tt := range []struct {
		name string
		opt  openapi.Option
		want []openapi.Violation
	}{
		{"strict", openapi.Strict(), []openapi.Violation{undeclaredAnswer}},
		{"strict request headers", openapi.StrictRequestHeaders(), []openapi.Violation{
			{In: "request undeclared-header", Path: "Idempotency-Key"},
			{In: "request undeclared-header", Path: "Traceparent"},
			undeclaredAnswer,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := openapi.Default(tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			body := `{"name":"Beta","platform":"ios","testersRequired":5,"rewardPerBug":19.99}`
			req := httptest.NewRequest("POST", "/v1/campaigns", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer svc_test_0123456789")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "9f1c7f4e-checkout")
			req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
			res := &http.Response{StatusCode: 200, Header: http.Header{}, Request: req}
			for k, val := range limited {
				res.Header.Set(k, val)
			}
			got := v.Check(req, []byte(body), res, []byte(answer))
			sortViolations := cmpopts.SortSlices(func(a, b openapi.Violation) bool { return a.In+a.Path < b.In+b.Path })
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(openapi.Violation{}, "Want", "Message"), sortViolations); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckIsSafeForConcurrentUse checks answers of every kind, the unrouted
// ones included, from parallel goroutines; the race detector is the judge.
func TestCheckIsSafeForConcurrentUse(t *testing.T) {
	v, err := openapi.Default(openapi.Strict())
	if err != nil {
		t.Fatal(err)
	}
	h := openapitest.Checking(v, sandboxtest.NewHandler(t, sandboxtest.Options{}), func(r *http.Request, _ int, violation openapi.Violation) {
		t.Errorf("%s %s: %+v", r.Method, r.URL.Path, violation)
	})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, target := range []string{"/v1/nowhere", "/v1/campaigns/cmp_000001", "/v1/campaigns/cmp_999999", "/nowhere", "/v1/testers", "/v1/bugs?status=bogus"} {
				method := []string{"GET", "DELETE"}[i%2]
				req := httptest.NewRequest(method, target, nil)
				req.Header.Set("Authorization", "Bearer svc_test_concurrent_"+strconv.Itoa(i))
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		}()
	}
	wg.Wait()
}

// TestInjectedRetryAftersFollowTheDocument plans every Retry-After a fault
// may ask for (FAULT-14, FAULT-15) on the statuses that carry one, and
// checks the sandbox's answers against the document, strictly.
func TestInjectedRetryAftersFollowTheDocument(t *testing.T) {
	v, err := openapi.Default(openapi.Strict())
	if err != nil {
		t.Fatal(err)
	}
	const date = "Wed, 21 Oct 2026 07:28:00 GMT"
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		for _, tt := range []struct {
			retryAfter, want string
		}{
			{`"` + date + `"`, date},
			{`"Wednesday, 21-Oct-26 07:28:00 GMT"`, "Wednesday, 21-Oct-26 07:28:00 GMT"},
			{`"Wed Oct 21 7:28:00 2026"`, "Wed Oct 21 7:28:00 2026"},
			{"0", "0"},
			{"null", ""},
		} {
			t.Run(strconv.Itoa(status)+" "+tt.retryAfter, func(t *testing.T) {
				h := sandboxtest.NewHandler(t, sandboxtest.Options{})
				send(t, h, "POST", "/_sandbox/faults", `{"method":"GET","path":"/v1/testers","status":`+strconv.Itoa(status)+`,"retryAfter":`+tt.retryAfter+`}`)
				req, res, body := send(t, h, "GET", "/v1/testers", "")
				if res.StatusCode != status || res.Header.Get(openapitest.FaultHeader) == "" || res.Header.Get("Retry-After") != tt.want {
					t.Fatalf("answer %d, %s %q, Retry-After %q; want the planned %d with Retry-After %q",
						res.StatusCode, openapitest.FaultHeader, res.Header.Get(openapitest.FaultHeader), res.Header.Get("Retry-After"), status, tt.want)
				}
				if got := v.Check(req, nil, res, body); len(got) > 0 {
					t.Errorf("the injected answer breaks the document: %v", got)
				}
			})
		}
	}
}

// send serves one request with the test key and returns it with its answer.
func send(t *testing.T, h http.Handler, method, target, body string) (*http.Request, *http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer svc_test_0123456789")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if method == "POST" && rec.Code != http.StatusOK {
		t.Fatalf("%s %s %s = %d: %s", method, target, body, rec.Code, rec.Body)
	}
	return req, rec.Result(), rec.Body.Bytes()
}
