package explore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	gherkin "github.com/cucumber/gherkin/go/v26"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/testcampaign/kit/conformance/internal/model"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/steps"
	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

func testExplorer(seed uint64) *explorer {
	m := model.New(kit.ProfileSandbox, kit.ContractSwitches{DuplicateFields: true, LongNumbers: true}, nil)
	return &explorer{t: &transport.Target{Model: m, Redact: wire.Redactor("svc_test_9f3kq2zx7wpl")}, seed: seed, sandbox: true}
}

func generate(seed uint64, n int) []xstep {
	x := testExplorer(seed)
	rng := rand.New(rand.NewPCG(x.seed, x.seed^0x9e3779b97f4a7c15))
	return newGenerator(rng, x).sequence(n)
}

// TestTheSameSeedSendsTheSameRequests: a seed named in a report replays
// the exploration that found a failure.
func TestTheSameSeedSendsTheSameRequests(t *testing.T) {
	a, b := generate(42, 200), generate(42, 200)
	if !reflect.DeepEqual(a, b) {
		t.Error("two sequences of seed 42 differ")
	}
	if reflect.DeepEqual(a, generate(43, 200)) {
		t.Error("seeds 42 and 43 give the same sequence")
	}
	if len(a) < 200 {
		t.Errorf("asked for 200 steps, got %d", len(a))
	}
}

// TestShrinkFindsTheSteps: of a failing sequence, the shrinker keeps only
// the steps the failure needs, in their order.
func TestShrinkFindsTheSteps(t *testing.T) {
	var long []xstep
	for i := range 40 {
		long = append(long, xstep{method: "GET", path: "/v1/campaigns?limit=" + string(rune('a'+i%26))})
	}
	create := xstep{method: "POST", path: "/v1/campaigns", body: "{}"}
	reset := xstep{method: "POST", path: "/_sandbox/reset"}
	long = slices.Insert(long, 7, create)
	long = slices.Insert(long, 30, reset)
	long = append(long, xstep{method: "GET", path: "/v1/analytics"})
	rule := "analytics are counted from the account's records"
	// The deviation: analytics after a create and a later reset.
	replay := func(seq []xstep) outcome {
		out := outcome{spent: len(seq)}
		created, wasReset := false, false
		for i, st := range seq {
			out.ran = append(out.ran, st)
			created = created || st == create
			wasReset = wasReset || (created && st == reset)
			if wasReset && st.path == "/v1/analytics" {
				out.violation, out.failedAt = &rules.RuleViolation{Rule: rule}, i
				return out
			}
		}
		return out
	}
	first := replay(long)
	if first.violation == nil {
		t.Fatal("the fake deployment does not fail the long sequence")
	}
	f := shrink(first, replay)
	want := []xstep{create, reset, {method: "GET", path: "/v1/analytics"}}
	if !f.shrunk || !reflect.DeepEqual(f.steps, want) {
		t.Errorf("shrunk to %v (shrunk %v), want %v", f.steps, f.shrunk, want)
	}
}

// TestShrinkKeepsWhatDoesNotFailAgain: a failure that does not come back
// when replayed one request at a time is reported as it was found.
func TestShrinkKeepsWhatDoesNotFailAgain(t *testing.T) {
	seq := []xstep{{method: "GET", path: "/v1/campaigns"}, {method: "GET", path: "/v1/bugs"}}
	first := outcome{ran: seq, failedAt: 1, violation: &rules.RuleViolation{Rule: "r"}}
	f := shrink(first, func(s []xstep) outcome { return outcome{ran: s, spent: len(s)} })
	if f.shrunk || !reflect.DeepEqual(f.steps, seq) {
		t.Errorf("a failure that did not come back: %v (shrunk %v)", f.steps, f.shrunk)
	}
}

// TestFindingsReadAsScenarios: the explorer's scenario is Gherkin whose
// every step is one of the library's, so conform --features runs it.
func TestFindingsReadAsScenarios(t *testing.T) {
	x := testExplorer(9)
	f := &finding{violation: rules.RuleViolation{Rule: "model: a read returns what was written"}, shrunk: true, steps: []xstep{
		{key: 0, method: "POST", path: "/v1/campaigns", body: `{"name":"A","platform":"ios","testersRequired":1,"rewardPerBug":1}`, contentType: "application/json", saveAt: "data.id", saveAs: "c1"},
		{key: 1, method: "GET", path: "/v1/campaigns/{c1}"},
		{key: 0, method: "GET", path: "/v1/campaigns", burst: 2},
	}}
	text := scenarioText(fmt.Sprintf("Found by conform's explorer (seed %d)", x.seed), f)
	doc, err := gherkin.ParseGherkinDocument(strings.NewReader(text), (&messages.Incrementing{}).NewId)
	if err != nil {
		t.Fatalf("not Gherkin: %v\n%s", err, text)
	}
	library := steps.NewLibrary()
	var sent []string
	for _, p := range gherkin.Pickles(*doc, "repro.feature", (&messages.Incrementing{}).NewId) {
		for _, st := range p.Steps {
			if n := library.Matches(st.Text); n != 1 {
				t.Errorf("the step %q matches %d steps of the library", st.Text, n)
			}
			if strings.HasPrefix(st.Text, "I send a") {
				sent = append(sent, st.Text)
			}
		}
	}
	if len(sent) != 4 {
		t.Errorf("%d requests in the scenario, want 4 (a burst of 2 is sent twice):\n%s", len(sent), text)
	}
	for _, want := range []string{"seed 9", `When I use the API key "{key1}"`, `And I save the JSON at "data.id" as "c1"`, "@" + model.RuleModel} {
		if !strings.Contains(text, want) {
			t.Errorf("the scenario lacks %q:\n%s", want, text)
		}
	}
	if !bytes.Contains([]byte(text), []byte("Given a fresh sandbox account")) {
		t.Errorf("the scenario does not start from fresh accounts:\n%s", text)
	}
	res := x.result("", f, 3, 0)
	if res.Status != kit.Failed || !strings.Contains(res.Message, text) {
		t.Errorf("the explorer's result does not carry the scenario: %+v", res)
	}
}

// TestAScenarioReplaysOnFreshAccounts: the requests of a failed scenario
// become steps that send, on a fresh account per key, the IDs their own
// answers give, and leave out what went to another address or carried no
// key.
func TestAScenarioReplaysOnFreshAccounts(t *testing.T) {
	base := "http://127.0.0.1:8080"
	tgt := &transport.Target{BaseURL: base}
	sent := func(method, target, key, body string, status int, answer string) *wire.Exchange {
		h := http.Header{}
		if key != "" {
			h.Set("Authorization", "Bearer "+key)
		}
		if body != "" {
			h.Set("Content-Type", "application/json")
		}
		return &wire.Exchange{Method: method, URL: target, ReqHeader: h, ReqBody: []byte(body), Status: status, Body: []byte(answer)}
	}
	r := ReplayOf(tgt, rules.RuleViolation{ID: "BUG-17"}, []*wire.Exchange{
		sent("POST", base+"/_sandbox/bugs", "svc_test_a", `{"title":"T"}`, 200, `{"success":true,"data":{"id":"bug_000007"}}`),
		sent("GET", base+"/v1/campaigns", "", "", 401, `{}`),
		sent("POST", "http://127.0.0.1:9/hooks", "svc_test_a", `{}`, 200, `{}`),
		sent("PATCH", base+"/v1/bugs/bug_000007", "svc_test_b", `{"resolution":"fixed","bug":"bug_000007"}`, 409, `{}`),
		sent("GET", base+"/v1/bugs/bug_000007?x=1", "svc_test_a", "", 200, `{"success":true,"data":{"id":"bug_000007"}}`),
	})
	want := []xstep{
		{key: 0, method: "POST", path: "/_sandbox/bugs", body: `{"title":"T"}`, contentType: "application/json", saveAt: "data.id", saveAs: "r0"},
		{key: 1, method: "PATCH", path: "/v1/bugs/{r0}", body: `{"resolution":"fixed","bug":"{r0}"}`, contentType: "application/json"},
		{key: 0, method: "GET", path: "/v1/bugs/{r0}?x=1"},
	}
	if !reflect.DeepEqual(r.steps, want) {
		t.Errorf("steps:\n got %+v\nwant %+v", r.steps, want)
	}
}
