package httpapi_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

const goldenSecret = "golden-session-secret"

var update = flag.Bool("update", false, "rewrite golden files from the current behaviour")

// session is a client's whole first session against a fresh account: every
// endpoint, successes and failures.
var session = []struct{ method, path, body string }{
	{"POST", "/v1/campaigns", `{"name":"Golden","platform":"android","testersRequired":12,"rewardPerBug":7.50}`},
	{"GET", "/v1/campaigns/cmp_000005", ""},
	{"GET", "/v1/campaigns?limit=2", ""},
	{"GET", "/v1/campaigns?limit=2&cursor=YzEuNA", ""},
	{"POST", "/v1/campaigns", `{"name":"","platform":"tvos"}`},
	{"GET", "/v1/bugs?status=new&limit=2", ""},
	{"PATCH", "/v1/bugs/bug_000009", `{"status":"confirmed"}`},
	{"PATCH", "/v1/bugs/bug_000009", `{"status":"resolved"}`},
	{"PATCH", "/v1/bugs/bug_000009", `{"status":"resolved","resolution":"fixed"}`},
	{"POST", "/v1/webhooks", `{"url":"https://hooks.example.test/svc","events":["*"]}`},
	{"GET", "/v1/testers?platform=ios", ""},
	{"GET", "/v1/analytics", ""},
	{"GET", "/v1/analytics?campaignId=cmp_000005", ""},
	{"DELETE", "/v1/campaigns", ""},
	{"GET", "/_sandbox/events", ""},
}

type exchange struct {
	Request string            `json:"request"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

func runSession(t *testing.T) []exchange {
	t.Helper()
	// Webhook secrets come from the server secret: a golden file keeps
	// them only with the secret set.
	c := newClient(t, sandboxtest.Options{Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Secret: goldenSecret})
	var out []exchange
	for _, step := range session {
		res := c.do(step.method, step.path, step.body)
		headers := map[string]string{}
		for _, name := range []string{"Allow", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
			if v := res.header.Get(name); v != "" {
				headers[name] = v
			}
		}
		out = append(out, exchange{Request: step.method + " " + step.path + " " + step.body, Status: res.status, Headers: headers, Body: res.raw})
	}
	return out
}

func TestFrozenClockSessionIsReproducible(t *testing.T) {
	first, second := runSession(t), runSession(t)
	for i := range first {
		if string(first[i].Body) != string(second[i].Body) {
			t.Errorf("%s: two fresh sandboxes answered differently:\n%s\n%s", first[i].Request, first[i].Body, second[i].Body)
		}
	}

	golden := filepath.Join("testdata", "frozen_clock_session.json")
	if *update {
		data, err := json.MarshalIndent(first, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	var want []exchange
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(decodeBodies(t, want), decodeBodies(t, first)); diff != "" {
		t.Errorf("session differs from %s (-want +got):\n%s", golden, diff)
	}
}

// decodeBodies turns raw bodies into values, so the comparison ignores JSON
// spacing and reports differences field by field, yet keeps number literals.
func decodeBodies(t *testing.T, exchanges []exchange) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range exchanges {
		// UseNumber keeps literals: 7.50 coming back as 7.5 is a regression.
		dec := json.NewDecoder(bytes.NewReader(e.Body))
		dec.UseNumber()
		var body any
		if err := dec.Decode(&body); err != nil {
			t.Fatalf("%s: %v", e.Request, err)
		}
		out = append(out, map[string]any{"request": e.Request, "status": e.Status, "headers": e.Headers, "body": body})
	}
	return out
}
