package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// Steps that drive the sandbox's controls (docs/controls.md) in one line
// each, where a raw request would take a path, a body and two checks. Each
// sends its request as any step does: the model judges it, and its answer is
// the response later steps check.

// controlDefs are the control steps of the library; every one needs the
// sandbox, so a scenario using one is tagged @sandbox.
func controlDefs(s *scenarioState) []stepDef {
	d := func(pattern, example string, fn any, tags ...string) stepDef {
		return stepDef{kit.StepDoc{Pattern: pattern, Example: example, Tags: append([]string{TagSandbox}, tags...)}, fn}
	}
	return []stepDef{
		d(`^I plan the fault:$`, "Given I plan the fault:\n  \"\"\"\n  {\"method\": \"POST\", \"path\": \"/v1/campaigns\", \"status\": 503, \"count\": 1}\n  \"\"\"", s.planFault),
		d(`^I clear the planned faults$`, `When I clear the planned faults`, s.clearFaults),
		d(`^I move the clock forward by "([^"]*)"$`, `When I move the clock forward by "90s"`, s.moveClock, TagFrozenClock),
		d(`^I reset the sandbox account$`, `When I reset the sandbox account`, s.resetAccount),
		d(`^the sandbox's deliveries should settle within (\d+) seconds?$`, `Then the sandbox's deliveries should settle within 5 seconds`, s.settleDeliveries),
		d(`^the journal should hold (\d+) "([A-Z]+)" requests? to "([^"]*)"$`, `Then the journal should hold 1 "POST" request to "/v1/campaigns"`, s.journalHolds),
		d(`^the journal should hold (\d+) requests? to "([^"]*)"$`, `Then the journal should hold 2 requests to "/v1/campaigns*"`, s.journalHoldsAny),
	}
}

// Tags a step may need its scenario to carry (kit.StepDoc.Tags).
const (
	TagSandbox     = "@sandbox"
	TagFrozenClock = "@frozen-clock"
)

// control sends one control request and wants a 200: a control that
// refused is the scenario's mistake or a broken sandbox, never something a
// later step should go on from.
func (s *scenarioState) control(ctx context.Context, method, path string, body []byte) (any, error) {
	ex, err := s.send(ctx, method, path, body, "application/json")
	if err != nil {
		return nil, err
	}
	if ex.NoAnswer != "" {
		return nil, fmt.Errorf("%s %s got no answer: the connection was dropped (%s)", method, path, ex.NoAnswer)
	}
	if ex.Status != http.StatusOK {
		return nil, fmt.Errorf("%s %s answered %d, want 200: %s", method, path, ex.Status, wire.Truncate(s.redact(strings.TrimSpace(string(ex.Body))), 300))
	}
	return ex.JSON()
}

// planFault plans the fault the doc string describes (POST /_sandbox/faults)
// and saves its id as faultId, which the X-Sandbox-Fault header of the
// answers it changes carries.
func (s *scenarioState) planFault(ctx context.Context, doc *godog.DocString) error {
	body, err := s.expand(doc.Content)
	if err != nil {
		return err
	}
	v, err := s.control(ctx, http.MethodPost, "/_sandbox/faults", []byte(body))
	if err != nil {
		return err
	}
	id, err := wire.Lookup(v, "data.id")
	if err != nil {
		return fmt.Errorf("the planned fault's answer: %w", err)
	}
	s.saved["faultId"] = id
	return nil
}

func (s *scenarioState) clearFaults(ctx context.Context) error {
	_, err := s.control(ctx, http.MethodDelete, "/_sandbox/faults", nil)
	return err
}

// moveClock moves the account's frozen clock. A sandbox whose clocks run
// answers 409, which the error explains.
func (s *scenarioState) moveClock(ctx context.Context, by string) error {
	d, err := s.expand(by)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]string{"advance": d})
	ex, err := s.send(ctx, http.MethodPost, "/_sandbox/clock", body, "application/json")
	if err != nil {
		return err
	}
	switch ex.Status {
	case http.StatusOK:
		return nil
	case http.StatusConflict:
		return fmt.Errorf("POST /_sandbox/clock answered 409: this sandbox's clocks run; start it with -frozen-clock (tag the scenario @frozen-clock so that it runs only there)")
	}
	return fmt.Errorf("POST /_sandbox/clock %s answered %d, want 200: %s", body, ex.Status, wire.Truncate(s.redact(strings.TrimSpace(string(ex.Body))), 300))
}

func (s *scenarioState) resetAccount(ctx context.Context) error {
	_, err := s.control(ctx, http.MethodPost, "/_sandbox/reset", nil)
	return err
}

// settleDeliveries waits, with POST /_sandbox/deliveries/settle, until no
// delivery of the account is in flight, queued or due. Retries waiting for
// their time are not waited for (docs/controls.md): under a frozen clock,
// move the clock past them first.
func (s *scenarioState) settleDeliveries(ctx context.Context, secs int) error {
	ms := time.Duration(secs) * time.Second / time.Millisecond
	if ms < 1 || ms > 30000 {
		return fmt.Errorf("%w: a settle waits 1 to 30 seconds, not %d", kit.ErrUsage, secs)
	}
	v, err := s.control(ctx, http.MethodPost, "/_sandbox/deliveries/settle", fmt.Appendf(nil, `{"timeoutMs": %d}`, ms))
	if err != nil {
		return err
	}
	if settled, _ := wire.Lookup(v, "data.settled"); settled != true {
		data, _ := wire.Lookup(v, "data")
		counts, _ := json.Marshal(data)
		return fmt.Errorf("the sandbox's deliveries did not settle within %s: %s", time.Duration(secs)*time.Second, counts)
	}
	return nil
}

// journalHoldsAny is journalHolds for every method.
func (s *scenarioState) journalHoldsAny(ctx context.Context, n int, path string) error {
	return s.journalHolds(ctx, n, "", path)
}

// journalHolds counts the requests of the account's journal that match a
// method ("" for any) and a path (a trailing * matches every path under
// it), as GET /_sandbox/requests?count=true does.
func (s *scenarioState) journalHolds(ctx context.Context, want int, method, path string) error {
	p, err := s.expand(path)
	if err != nil {
		return err
	}
	q := url.Values{"count": {"true"}, "path": {p}}
	if method != "" {
		q.Set("method", method)
	}
	v, err := s.control(ctx, http.MethodGet, "/_sandbox/requests?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	got, err := wire.Lookup(v, "data.count")
	if err != nil {
		return fmt.Errorf("the journal's count: %w", err)
	}
	if n, ok := got.(json.Number); !ok || n.String() != fmt.Sprint(want) {
		what := "requests"
		if method != "" {
			what = method + " requests"
		}
		return fmt.Errorf("the journal holds %v %s to %q, want %d", got, what, p, want)
	}
	return nil
}
