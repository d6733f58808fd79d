package steps

import (
	"net/http"
	"strings"
	"testing"

	"github.com/testcampaign/kit/conformance/internal/receiver"
	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

// TestAWalkOrADeliveryIsReadButNotSent: the JSON and header steps read what
// a walk gathered or a delivery brought, while the scenario's exchanges,
// which reports show and the rate-limit steps compare, stay the requests it
// sent.
func TestAWalkOrADeliveryIsReadButNotSent(t *testing.T) {
	s := newScenarioState(&transport.Target{Key: "svc_test_readingreading", Redact: func(s string) string { return s }}, nil)
	first := &wire.Exchange{Method: "GET", URL: "http://127.0.0.1/v1/campaigns?limit=1", Status: 200, Header: http.Header{"X-Ratelimit-Remaining": {"9"}}, Body: []byte(`{"success":true}`)}
	second := &wire.Exchange{Method: "GET", URL: "http://127.0.0.1/v1/campaigns?limit=1&cursor=c1", Status: 200, Header: http.Header{"X-Ratelimit-Remaining": {"8"}}, Body: []byte(`{"success":true}`)}
	sent(s, first, second)

	readWalked(s, "/v1/campaigns", []any{map[string]any{"id": "cmp_1"}, map[string]any{"id": "cmp_2"}})
	if n, err := lengthAt(s, "items"); err != nil || n != 2 {
		t.Errorf("the walk's items: %d, %v; want the 2 walked", n, err)
	}
	if prev, last, err := s.previous(); err != nil || prev != first || last != second {
		t.Errorf("after a walk the two last exchanges are %v and %v (%v); want the two pages sent", prev, last, err)
	}
	if s.sent() != 2 || s.last() != second || len(s.transcript()) != 2 {
		t.Errorf("after a walk the scenario sent %d, last %v; want the 2 pages only:\n%s", s.sent(), s.last(), strings.Join(s.transcript(), "\n"))
	}

	readDelivered(s, receiver.Delivery{Header: http.Header{"Webhook-Id": {"msg_1"}}, Body: []byte(`{"type":"campaign.created"}`), Answered: 204})
	if got := headerRead(s, "Webhook-Id"); got != "msg_1" || !s.readsDelivery() {
		t.Errorf("the delivery's Webhook-Id reads %q (a delivery read: %t)", got, s.readsDelivery())
	}
	third := &wire.Exchange{Method: "POST", URL: "http://127.0.0.1/_sandbox/clock", Status: 200, Header: http.Header{}, Body: []byte(`{"success":true}`)}
	sent(s, third)
	if got := headerRead(s, "Webhook-Id"); got != "" || s.readsDelivery() {
		t.Errorf("after a request the response read is still the delivery (Webhook-Id %q)", got)
	}
	if s.delivered == nil || s.delivered.Header.Get("Webhook-Id") != "msg_1" || s.sent() != 3 {
		t.Errorf("after a request the delivery to wait for a retry of is %v, with %d sent; want msg_1 and 3", s.delivered, s.sent())
	}
}

// lengthAt is the length of the array at path of the response read.
func lengthAt(s *scenarioState, path string) (int, error) {
	v, err := valueAt(s, path)
	if err != nil {
		return 0, err
	}
	a, _ := v.([]any)
	return len(a), nil
}

func headerRead(s *scenarioState, name string) string {
	e, err := s.response()
	if err != nil {
		return ""
	}
	return e.Header.Get(name)
}
