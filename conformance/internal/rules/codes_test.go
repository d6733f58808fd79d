package rules

import (
	"net/http"
	"testing"

	"github.com/testcampaign/kit/conformance/internal/wire"
)

func answer(status int, header http.Header, body string) *wire.Exchange {
	if header == nil {
		header = http.Header{}
	}
	return &wire.Exchange{Status: status, Header: header, Body: []byte(body)}
}

func TestErrorCodesComeWithTheirStatus(t *testing.T) {
	for _, c := range []struct {
		name   string
		e      *wire.Exchange
		judged bool
		rule   string
	}{
		{"a documented code with its status", answer(404, nil, `{"success":false,"error":{"code":"NOT_FOUND","message":"m","status":404}}`), true, ""},
		{"a conflict code on 409", answer(409, nil, `{"success":false,"error":{"code":"LIMIT_REACHED","message":"m","status":409}}`), true, ""},
		{"a code of another status", answer(400, nil, `{"success":false,"error":{"code":"NOT_FOUND","message":"m","status":400}}`), true, "ERR-5"},
		{"an undocumented code", answer(400, nil, `{"success":false,"error":{"code":"BAD_REQUEST","message":"m","status":400}}`), true, "ERR-4"},
		{"an injected failure nobody planned", answer(500, nil, `{"success":false,"error":{"code":"INJECTED_FAILURE","message":"m","status":500}}`), true, "ERR-4"},
		{"a success", answer(200, nil, `{"success":true,"data":{}}`), false, ""},
		{"a body that is not JSON", answer(431, nil, `Request Header Fields Too Large`), false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			judged, err := checkErrorCode(c.e)
			if judged != c.judged || ruleOf(err) != c.rule {
				t.Errorf("judged %t, broke %q (%v); want judged %t, broke %q", judged, ruleOf(err), err, c.judged, c.rule)
			}
		})
	}
}

func TestEveryBudgetReportedNamesItsScope(t *testing.T) {
	headers := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	for _, c := range []struct {
		name, path string
		e          *wire.Exchange
		judged     bool
		broke      bool
	}{
		{"the /v1 windows", "/v1/campaigns", answer(200, headers(HdrLimit, "1000", hdrScope, "key"), ""), true, false},
		{"the controls' budget", "/_sandbox/faults", answer(200, headers(HdrLimit, "600", hdrScope, "controls"), ""), true, false},
		{"a client's budget on /v1", "/v1/campaigns", answer(429, headers(hdrScope, "client"), ""), true, false},
		{"no scope with the headers", "/v1/campaigns", answer(200, headers(HdrLimit, "1000"), ""), true, true},
		{"no scope on a 429", "/v1/campaigns", answer(429, nil, ""), true, true},
		{"the controls' scope on /v1", "/v1/campaigns", answer(200, headers(HdrLimit, "1000", hdrScope, "controls"), ""), true, true},
		{"the key's scope on a control", "/_sandbox/requests", answer(429, headers(hdrScope, "key"), ""), true, true},
		{"no budget reported", "/healthz", answer(200, nil, ""), false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			judged, err := checkScope(c.path, c.e)
			if judged != c.judged || (err != nil) != c.broke || (err != nil && ruleOf(err) != "RATE-14") {
				t.Errorf("judged %t, broke %v; want judged %t, broke %t", judged, err, c.judged, c.broke)
			}
		})
	}
}
