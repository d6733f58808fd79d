package model

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// These tests hand the model recorded exchanges, as the checking transport
// would, and check what it makes of them: for each rule, one sequence that
// keeps it and one that breaks it. The whole-run tests against broken
// sandboxes check the same rules end to end; these find a wrong
// expectation of the model without a run having to reach it.

const testKey = "svc_test_model_unit_0001"

// t0 is the server's clock at the first exchange: the middle of a minute,
// so that no window ends within a test.
var t0 = time.Date(2026, 11, 24, 9, 30, 20, 0, time.UTC)

func testSeed(t *testing.T) *Seed {
	t.Helper()
	pages := map[string]string{
		"/v1/campaigns?limit=100": `{"success":true,"data":{"items":[{"id":"cmp_000001","name":"Seed","platform":"ios","testersRequired":5,"rewardPerBug":10,"status":"active","createdAt":"2026-01-01T00:00:00.000Z"}],"hasMore":false,"nextCursor":null}}`,
		"/v1/bugs?limit=100":      `{"success":true,"data":{"items":[{"id":"bug_000001","campaignId":"cmp_000001","title":"t","severity":"low","status":"new","resolution":null,"testerId":"tst_000001","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z"}],"hasMore":false,"nextCursor":null}}`,
		"/v1/testers?limit=100":   `{"success":true,"data":{"items":[{"id":"tst_000001","name":"T","platforms":["ios"],"createdAt":"2026-01-01T00:00:00.000Z"}],"hasMore":false,"nextCursor":null}}`,
	}
	seed, err := ReadSeed(t.Context(), func(_ context.Context, path string) (int, []byte, error) {
		return http.StatusOK, []byte(pages[path]), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return seed
}

// account is one fresh sandbox account fed recorded exchanges.
type fakeAccount struct {
	t   *testing.T
	m   *Model
	now time.Time
}

func newFakeAccount(t *testing.T) *fakeAccount {
	m := New(kit.ProfileSandbox, kit.ContractSwitches{}, testSeed(t))
	m.Own(testKey, true)
	return &fakeAccount{t: t, m: m, now: t0}
}

// exchange feeds one request and its answer; headers are name, value pairs.
func (f *fakeAccount) exchange(method, target, reqBody string, status int, resp string, headers ...string) []Disagreement {
	f.t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		f.t.Fatal(err)
	}
	h := http.Header{"Date": {f.now.Format(http.TimeFormat)}}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
	}
	e := &wire.Exchange{Method: method, URL: u.String(), ReqHeader: http.Header{}, ReqBody: []byte(reqBody), Status: status, Header: h, Body: []byte(resp)}
	if reqBody != "" {
		e.ReqHeader.Set("Content-Type", "application/json")
	}
	return f.m.Observe(f.m.Begin(testKey), e)
}

// stamp is the contract's timestamp of the account's clock now.
func (f *fakeAccount) stamp() string { return f.now.UTC().Format("2006-01-02T15:04:05.000Z") }

const newCampaign = `{"name":"Beta","platform":"ios","testersRequired":5,"rewardPerBug":19.99}`

// campaign is the answer to newCampaign, with id and edit applied.
func (f *fakeAccount) campaign(id string, edit ...string) string {
	fields := map[string]string{"id": `"` + id + `"`, "name": `"Beta"`, "platform": `"ios"`, "testersRequired": "5",
		"rewardPerBug": "19.99", "status": `"draft"`, "createdAt": `"` + f.stamp() + `"`}
	for i := 0; i+1 < len(edit); i += 2 {
		fields[edit[i]] = edit[i+1]
	}
	var parts []string
	for _, k := range []string{"id", "name", "platform", "testersRequired", "rewardPerBug", "status", "createdAt"} {
		parts = append(parts, fmt.Sprintf("%q:%s", k, fields[k]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func success(data string) string { return `{"success":true,"data":` + data + `}` }

func failure(status int, code string) string {
	return fmt.Sprintf(`{"success":false,"error":{"code":%q,"message":"m","status":%d}}`, code, status)
}

func list(items ...string) string {
	return success(`{"items":[` + strings.Join(items, ",") + `],"hasMore":false,"nextCursor":null}`)
}

// rate is the rate-limit headers of the account's minute window.
func (f *fakeAccount) rate(remaining int) []string {
	reset := f.now.Truncate(time.Minute).Add(time.Minute).Unix()
	return []string{"X-RateLimit-Limit", "1000", "X-RateLimit-Remaining", fmt.Sprint(remaining), "X-RateLimit-Reset", fmt.Sprint(reset)}
}

func TestModelRules(t *testing.T) {
	for _, tt := range []struct {
		name string
		// rule is what the model must name when the last exchange of
		// broken breaks it; kept must give no disagreement at all.
		rule   string
		kept   func(f *fakeAccount) []Disagreement
		broken func(f *fakeAccount) []Disagreement
	}{{
		name: "IDs follow the account's sequence",
		rule: "IDs follow the account's own sequence",
		kept: func(f *fakeAccount) []Disagreement {
			return f.exchange("POST", "/v1/campaigns", newCampaign, 200, success(f.campaign("cmp_000002")))
		},
		broken: func(f *fakeAccount) []Disagreement {
			return f.exchange("POST", "/v1/campaigns", newCampaign, 200, success(f.campaign("cmp_000004")))
		},
	}, {
		name: "a refused write uses no ID",
		rule: "IDs follow the account's own sequence",
		kept: func(f *fakeAccount) []Disagreement {
			f.exchange("POST", "/v1/campaigns", `{"name":"","platform":"ios","testersRequired":5,"rewardPerBug":1}`, 400, failure(400, "VALIDATION_ERROR"))
			return f.exchange("POST", "/v1/campaigns", newCampaign, 200, success(f.campaign("cmp_000002")))
		},
		broken: func(f *fakeAccount) []Disagreement {
			f.exchange("POST", "/v1/campaigns", `{"name":"","platform":"ios","testersRequired":5,"rewardPerBug":1}`, 400, failure(400, "VALIDATION_ERROR"))
			return f.exchange("POST", "/v1/campaigns", newCampaign, 200, success(f.campaign("cmp_000003")))
		},
	}, {
		name: "a write's answer holds the values sent",
		rule: "a write's answer holds exactly the values sent",
		kept: func(f *fakeAccount) []Disagreement {
			return f.exchange("POST", "/v1/campaigns", newCampaign, 200, success(f.campaign("cmp_000002")))
		},
		broken: func(f *fakeAccount) []Disagreement {
			return f.exchange("POST", "/v1/campaigns", newCampaign, 200, success(f.campaign("cmp_000002", "rewardPerBug", "19.9")))
		},
	}, {
		name: "a new campaign is a draft",
		rule: "a new campaign is a draft",
		kept: func(f *fakeAccount) []Disagreement {
			return f.exchange("POST", "/v1/campaigns", newCampaign, 200, success(f.campaign("cmp_000002")))
		},
		broken: func(f *fakeAccount) []Disagreement {
			return f.exchange("POST", "/v1/campaigns", newCampaign, 200, success(f.campaign("cmp_000002", "status", `"active"`)))
		},
	}, {
		name: "a read returns what was written",
		rule: "a read returns what was written",
		kept: func(f *fakeAccount) []Disagreement {
			f.exchange("POST", "/v1/campaigns", newCampaign, 200, success(f.campaign("cmp_000002")))
			return f.exchange("GET", "/v1/campaigns/cmp_000002", "", 200, success(f.campaign("cmp_000002")))
		},
		broken: func(f *fakeAccount) []Disagreement {
			f.exchange("POST", "/v1/campaigns", newCampaign, 200, success(f.campaign("cmp_000002")))
			return f.exchange("GET", "/v1/campaigns/cmp_000002", "", 200, success(f.campaign("cmp_000002", "name", `"Gamma"`)))
		},
	}, {
		name: "an account shows only its own records",
		rule: "a request the contract refuses is refused (an id the account does not hold)",
		kept: func(f *fakeAccount) []Disagreement {
			return f.exchange("GET", "/v1/campaigns/cmp_000099", "", 404, failure(404, "NOT_FOUND"))
		},
		broken: func(f *fakeAccount) []Disagreement {
			return f.exchange("GET", "/v1/campaigns/cmp_000099", "", 200, success(f.campaign("cmp_000099")))
		},
	}, {
		name: "a list is the account's records, newest first",
		rule: "lists are newest first",
		kept: func(f *fakeAccount) []Disagreement {
			f.exchange("POST", "/v1/campaigns", newCampaign, 200, success(f.campaign("cmp_000002")))
			return f.exchange("GET", "/v1/campaigns?status=draft", "", 200, list(f.campaign("cmp_000002")))
		},
		broken: func(f *fakeAccount) []Disagreement {
			older := f.campaign("cmp_000002")
			f.exchange("POST", "/v1/campaigns", newCampaign, 200, success(older))
			f.now = f.now.Add(time.Second)
			newer := f.campaign("cmp_000003")
			f.exchange("POST", "/v1/campaigns", newCampaign, 200, success(newer))
			return f.exchange("GET", "/v1/campaigns?status=draft", "", 200, list(older, newer))
		},
	}, {
		name: "HEAD has no body",
		rule: "HEAD is answered like GET, without a body",
		kept: func(f *fakeAccount) []Disagreement {
			return f.exchange("HEAD", "/v1/campaigns", "", 200, "", "Content-Type", "application/json")
		},
		broken: func(f *fakeAccount) []Disagreement {
			return f.exchange("HEAD", "/v1/campaigns", "", 200, list(), "Content-Type", "application/json")
		},
	}, {
		name: "HEAD carries the content type GET sends",
		rule: "HEAD carries the headers GET would send",
		kept: func(f *fakeAccount) []Disagreement {
			return f.exchange("HEAD", "/v1/bugs", "", 200, "", "Content-Type", "application/json")
		},
		broken: func(f *fakeAccount) []Disagreement {
			return f.exchange("HEAD", "/v1/bugs", "", 200, "")
		},
	}, {
		name: "HEAD is answered wherever GET is",
		rule: "HEAD is answered wherever GET is",
		kept: func(f *fakeAccount) []Disagreement {
			return f.exchange("HEAD", "/v1/testers", "", 200, "", "Content-Type", "application/json")
		},
		broken: func(f *fakeAccount) []Disagreement {
			return f.exchange("HEAD", "/v1/testers", "", 405, failure(405, "METHOD_NOT_ALLOWED"), "Allow", "GET")
		},
	}, {
		name: "Allow names exactly the methods served",
		rule: "Allow lists exactly the methods the path serves",
		kept: func(f *fakeAccount) []Disagreement {
			return f.exchange("DELETE", "/v1/campaigns", "", 405, failure(405, "METHOD_NOT_ALLOWED"), "Allow", "POST, GET,HEAD")
		},
		broken: func(f *fakeAccount) []Disagreement {
			return f.exchange("DELETE", "/v1/campaigns", "", 405, failure(405, "METHOD_NOT_ALLOWED"), "Allow", "GET, HEAD, POST, DELETE")
		},
	}, {
		name: "a wrong method is 405",
		rule: "a method a known path does not serve is 405 METHOD_NOT_ALLOWED",
		kept: func(f *fakeAccount) []Disagreement {
			return f.exchange("GET", "/v1/webhooks", "", 405, failure(405, "METHOD_NOT_ALLOWED"), "Allow", "POST")
		},
		broken: func(f *fakeAccount) []Disagreement {
			return f.exchange("GET", "/v1/webhooks", "", 404, failure(404, "NOT_FOUND"))
		},
	}, {
		name: "a body sent as JSON is read, never 415",
		rule: "a body sent as application/json, with parameters or in any case, is read",
		kept: func(f *fakeAccount) []Disagreement {
			return f.exchange("POST", "/v1/campaigns", `{"name":"x"`, 400, failure(400, "INVALID_JSON"))
		},
		broken: func(f *fakeAccount) []Disagreement {
			return f.exchange("POST", "/v1/campaigns", `{"name":"x"`, 415, failure(415, "UNSUPPORTED_MEDIA_TYPE"))
		},
	}, {
		name: "a bug moves only as the lifecycle table allows",
		rule: "a request the contract refuses is refused (the move new → resolved is not in the lifecycle table)",
		kept: func(f *fakeAccount) []Disagreement {
			return f.exchange("PATCH", "/v1/bugs/bug_000001", `{"status":"resolved","resolution":"fixed"}`, 409, failure(409, "INVALID_STATUS_TRANSITION"))
		},
		broken: func(f *fakeAccount) []Disagreement {
			return f.exchange("PATCH", "/v1/bugs/bug_000001", `{"status":"resolved","resolution":"fixed"}`, 200,
				success(`{"id":"bug_000001","campaignId":"cmp_000001","title":"t","severity":"low","status":"resolved","resolution":"fixed","testerId":"tst_000001","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"`+f.stamp()+`"}`))
		},
	}, {
		name: "the remaining count moves by one a request",
		rule: "the remaining count moves by exactly the requests counted",
		kept: func(f *fakeAccount) []Disagreement {
			f.exchange("GET", "/v1/campaigns/cmp_000099", "", 404, failure(404, "NOT_FOUND"), f.rate(999)...)
			return f.exchange("GET", "/v1/campaigns/cmp_000099", "", 404, failure(404, "NOT_FOUND"), f.rate(998)...)
		},
		broken: func(f *fakeAccount) []Disagreement {
			f.exchange("GET", "/v1/campaigns/cmp_000099", "", 404, failure(404, "NOT_FOUND"), f.rate(999)...)
			return f.exchange("GET", "/v1/campaigns/cmp_000099", "", 404, failure(404, "NOT_FOUND"), f.rate(996)...)
		},
	}, {
		name: "a request within the limit is not refused",
		rule: "a request within the limit is not refused",
		kept: func(f *fakeAccount) []Disagreement {
			f.exchange("GET", "/v1/campaigns/cmp_000099", "", 404, failure(404, "NOT_FOUND"), f.rate(999)...)
			return f.exchange("GET", "/v1/campaigns/cmp_000099", "", 404, failure(404, "NOT_FOUND"), f.rate(998)...)
		},
		broken: func(f *fakeAccount) []Disagreement {
			f.exchange("GET", "/v1/campaigns/cmp_000099", "", 404, failure(404, "NOT_FOUND"), f.rate(999)...)
			return f.exchange("GET", "/v1/campaigns/cmp_000099", "", 429, failure(429, "RATE_LIMIT_EXCEEDED"), append(f.rate(998), "Retry-After", "30")...)
		},
	}, {
		name: "each write records exactly one event",
		rule: "each write records exactly one event",
		kept: func(f *fakeAccount) []Disagreement {
			f.exchange("POST", "/v1/campaigns", newCampaign, 200, success(f.campaign("cmp_000002")))
			return f.exchange("GET", "/_sandbox/events", "", 200, list(`{"id":"evt_000001","type":"campaign.created","data":`+f.campaign("cmp_000002")+`,"createdAt":"`+f.stamp()+`"}`))
		},
		broken: func(f *fakeAccount) []Disagreement {
			f.exchange("POST", "/v1/campaigns", newCampaign, 200, success(f.campaign("cmp_000002")))
			return f.exchange("GET", "/_sandbox/events", "", 200, list())
		},
	}, {
		name: "a frozen clock stands still",
		rule: "a frozen clock stands still until moved",
		kept: func(f *fakeAccount) []Disagreement {
			f.exchange("POST", "/_sandbox/clock", `{"advance":"1s"}`, 200, success(`{"now":"`+f.stamp()+`"}`))
			return f.exchange("GET", "/v1/campaigns/cmp_000099", "", 404, failure(404, "NOT_FOUND"))
		},
		broken: func(f *fakeAccount) []Disagreement {
			f.exchange("POST", "/_sandbox/clock", `{"advance":"1s"}`, 200, success(`{"now":"`+f.stamp()+`"}`))
			f.now = f.now.Add(5 * time.Second)
			return f.exchange("GET", "/v1/campaigns/cmp_000099", "", 404, failure(404, "NOT_FOUND"))
		},
	}, {
		name: "analytics count the account's records",
		rule: "analytics are counted from the account's records",
		kept: func(f *fakeAccount) []Disagreement {
			return f.exchange("GET", "/v1/analytics", "", 200, success(`{"campaigns":1,"bugs":{"total":1,"byStatus":{"new":1,"confirmed":0,"in_progress":0,"resolved":0,"closed":0},"bySeverity":{"low":1,"medium":0,"high":0,"critical":0}}}`))
		},
		broken: func(f *fakeAccount) []Disagreement {
			return f.exchange("GET", "/v1/analytics", "", 200, success(`{"campaigns":2,"bugs":{"total":1,"byStatus":{"new":1,"confirmed":0,"in_progress":0,"resolved":0,"closed":0},"bySeverity":{"low":1,"medium":0,"high":0,"critical":0}}}`))
		},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.kept(newFakeAccount(t)); len(got) > 0 {
				t.Errorf("a sequence that keeps the rule: the model disagrees: %v", got)
			}
			got := tt.broken(newFakeAccount(t))
			found := false
			for _, d := range got {
				found = found || strings.Contains(d.Rule, tt.rule)
			}
			if !found {
				t.Errorf("a sequence that breaks %q: the model says %v", tt.rule, got)
			}
		})
	}
}

// TestModelAgreesWithTheSeedItWasHanded: a fresh account holds exactly
// the seed, so a list of it is the seed, and a list missing a record of it
// is a deviation.
func TestModelAgreesWithTheSeedItWasHanded(t *testing.T) {
	seedCampaign := `{"id":"cmp_000001","name":"Seed","platform":"ios","testersRequired":5,"rewardPerBug":10,"status":"active","createdAt":"2026-01-01T00:00:00.000Z"}`
	if got := newFakeAccount(t).exchange("GET", "/v1/campaigns", "", 200, list(seedCampaign)); len(got) > 0 {
		t.Errorf("the seed as the model was handed it: %v", got)
	}
	got := newFakeAccount(t).exchange("GET", "/v1/campaigns", "", 200, list())
	if len(got) == 0 {
		t.Error("a fresh account's list without its seeded campaign: the model agrees")
	}
}

// TestReadSeedSaysWhyItCannot: a seed the model cannot hold exactly is an
// error saying why, never a silent nil.
func TestReadSeedSaysWhyItCannot(t *testing.T) {
	for _, tt := range []struct {
		name string
		get  seedGetter
		want string
	}{
		{"unreachable", func(context.Context, string) (int, []byte, error) { return 0, nil, errors.New("connection refused") }, "connection refused"},
		{"refused", func(context.Context, string) (int, []byte, error) {
			return 500, []byte(failure(500, "INTERNAL_ERROR")), nil
		}, "answered 500"},
		{"not JSON", func(context.Context, string) (int, []byte, error) { return 200, []byte("<html>"), nil }, "not JSON"},
		{"endless", func(context.Context, string) (int, []byte, error) {
			return 200, []byte(success(`{"items":[],"hasMore":true,"nextCursor":"next"}`)), nil
		}, "more than 100 pages"},
		{"IDs without a sequence", func(_ context.Context, path string) (int, []byte, error) {
			return 200, []byte(list(`{"id":"campaign-one"}`)), nil
		}, "cannot follow"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			seed, err := ReadSeed(t.Context(), tt.get)
			if seed != nil || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadSeed: %v, %v; want no seed and an error saying %q", seed, err, tt.want)
			}
		})
	}
}

// TestDroppedAccountsLeaveTheModel: an exploration opens accounts without
// end; the model keeps none it was told the run has finished with.
func TestDroppedAccountsLeaveTheModel(t *testing.T) {
	m := New(kit.ProfileSandbox, kit.ContractSwitches{}, testSeed(t))
	for i := range 1000 {
		key := fmt.Sprintf("svc_test_model_drop_%04d", i)
		m.Own(key, true)
		e := &wire.Exchange{Method: "GET", URL: "/v1/campaigns/cmp_000099", Status: 404, Header: http.Header{}, Body: []byte(failure(404, "NOT_FOUND"))}
		m.Observe(m.Begin(key), e)
		m.Drop(key)
	}
	if n := len(m.accounts) + len(m.owned); n != 0 {
		t.Errorf("the model holds %d accounts and owned keys after every one was dropped", n)
	}
}

// TestModelBlamesTheRuleItBreaks: a break is reported under the rule that
// states what was broken, not only under a rule it shares with others, so
// that a report and a proof can tell which rule a deployment broke.
func TestModelBlamesTheRuleItBreaks(t *testing.T) {
	seedBug := func(status string) string {
		return `{"id":"bug_000001","campaignId":"cmp_000001","title":"t","severity":"low","status":"` + status + `","resolution":null,"testerId":"tst_000001","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z"}`
	}
	for _, tt := range []struct {
		name string
		rule string
		run  func(f *fakeAccount) []Disagreement
	}{{
		name: "a platform in capitals taken",
		rule: "CMP-10",
		run: func(f *fakeAccount) []Disagreement {
			return f.exchange("POST", "/v1/campaigns", `{"name":"Beta","platform":"WEB","testersRequired":5,"rewardPerBug":19.99}`, 200, success(f.campaign("cmp_000002", "platform", `"web"`)))
		},
	}, {
		name: "a blank name refused as a conflict",
		rule: "CMP-9",
		run: func(f *fakeAccount) []Disagreement {
			return f.exchange("POST", "/v1/campaigns", `{"name":"  ","platform":"ios","testersRequired":5,"rewardPerBug":19.99}`, 409, failure(409, "CONFLICT"))
		},
	}, {
		name: "two filters of which one is applied",
		rule: "LIST-13",
		run: func(f *fakeAccount) []Disagreement {
			f.exchange("POST", "/v1/campaigns", `{"name":"Beta","platform":"android","testersRequired":5,"rewardPerBug":19.99}`, 200, success(f.campaign("cmp_000002", "platform", `"android"`)))
			return f.exchange("GET", "/v1/campaigns?status=draft&platform=ios", "", 200, list(f.campaign("cmp_000002", "platform", `"android"`)))
		},
	}, {
		name: "a refused move that shows when the bug is read",
		rule: "BUG-18",
		run: func(f *fakeAccount) []Disagreement {
			f.exchange("PATCH", "/v1/bugs/bug_000001", `{"status":"resolved","resolution":"fixed"}`, 409, failure(409, "INVALID_STATUS_TRANSITION"))
			return f.exchange("GET", "/v1/bugs", "", 200, list(seedBug("resolved")))
		},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.run(newFakeAccount(t))
			for _, d := range got {
				if d.ID == tt.rule {
					return
				}
			}
			t.Errorf("the model blames %v, not %s", got, tt.rule)
		})
	}
}
