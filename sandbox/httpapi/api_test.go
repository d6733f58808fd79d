package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

func TestCreateCampaignReturnsDraftWithExactReward(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	var got campaign
	c.ok("POST", "/v1/campaigns", `{"name":"Checkout","platform":"ios","testersRequired":10,"rewardPerBug":19.99,"unknown":true}`, &got)
	if got.Status != "draft" || got.Name != "Checkout" || got.Platform != "ios" || got.TestersRequired != 10 {
		t.Errorf("created campaign = %+v", got)
	}
	if string(got.RewardPerBug) != "19.99" {
		t.Errorf("rewardPerBug = %s, want 19.99 exactly", got.RewardPerBug)
	}
	if !strings.HasPrefix(got.ID, "cmp_") || !strings.HasSuffix(got.CreatedAt, "Z") {
		t.Errorf("id %q or createdAt %q malformed", got.ID, got.CreatedAt)
	}
	var fetched campaign
	c.ok("GET", "/v1/campaigns/"+got.ID, "", &fetched)
	if diff := cmp.Diff(got, fetched); diff != "" {
		t.Errorf("GET differs from POST (-post +get):\n%s", diff)
	}
}

func TestCreateCampaignValidation(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		fields []string
	}{
		{"all missing", `{}`, []string{"name", "platform", "testersRequired", "rewardPerBug"}},
		{"wrong types", `{"name":1,"platform":true,"testersRequired":"5","rewardPerBug":"1"}`, []string{"name", "platform", "testersRequired", "rewardPerBug"}},
		{"blank name", `{"name":"  ","platform":"ios","testersRequired":1,"rewardPerBug":0}`, []string{"name"}},
		{"long name", fmt.Sprintf(`{"name":%q,"platform":"ios","testersRequired":1,"rewardPerBug":0}`, strings.Repeat("é", 201)), []string{"name"}},
		{"unknown platform", `{"name":"a","platform":"tvos","testersRequired":1,"rewardPerBug":0}`, []string{"platform"}},
		{"fractional testers", `{"name":"a","platform":"ios","testersRequired":2.5,"rewardPerBug":0}`, []string{"testersRequired"}},
		{"zero testers", `{"name":"a","platform":"ios","testersRequired":0,"rewardPerBug":0}`, []string{"testersRequired"}},
		{"too many testers", `{"name":"a","platform":"ios","testersRequired":10001,"rewardPerBug":0}`, []string{"testersRequired"}},
		{"three decimals", `{"name":"a","platform":"ios","testersRequired":1,"rewardPerBug":1.001}`, []string{"rewardPerBug"}},
		{"negative reward", `{"name":"a","platform":"ios","testersRequired":1,"rewardPerBug":-1}`, []string{"rewardPerBug"}},
		{"huge reward", `{"name":"a","platform":"ios","testersRequired":1,"rewardPerBug":100000.01}`, []string{"rewardPerBug"}},
		{"huge exponent", `{"name":"a","platform":"ios","testersRequired":1,"rewardPerBug":1e999999999}`, []string{"rewardPerBug"}},
	}
	c := newClient(t, sandboxtest.Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			res := c.fails("POST", "/v1/campaigns", tt.body, http.StatusBadRequest, "VALIDATION_ERROR")
			var fields []string
			for _, d := range res.env.Error.Details {
				fields = append(fields, d.Field)
				if d.Message == "" {
					t.Errorf("detail for %s has no message", d.Field)
				}
			}
			if diff := cmp.Diff(tt.fields, fields); diff != "" {
				t.Errorf("invalid fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCreateCampaignBoundsAreInclusive(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	var got campaign
	c.ok("POST", "/v1/campaigns", fmt.Sprintf(`{"name":%q,"platform":"web","testersRequired":10000,"rewardPerBug":100000.00}`, strings.Repeat("x", 200)), &got)
	if got.TestersRequired != 10000 || string(got.RewardPerBug) != "100000.00" {
		t.Errorf("got %+v", got)
	}
}

func TestMalformedRequests(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	tests := []struct {
		name    string
		method  string
		path    string
		body    string
		headers []string
		status  int
		code    string
	}{
		{"broken JSON", "POST", "/v1/campaigns", `{"name":`, nil, 400, "INVALID_JSON"},
		{"array body", "POST", "/v1/campaigns", `[1,2]`, nil, 400, "INVALID_JSON"},
		{"null body", "POST", "/v1/campaigns", `null`, nil, 400, "INVALID_JSON"},
		{"two objects", "POST", "/v1/campaigns", `{} {}`, nil, 400, "INVALID_JSON"},
		{"empty body", "POST", "/v1/campaigns", "", []string{"Content-Type", "application/json"}, 400, "INVALID_JSON"},
		{"text content type", "POST", "/v1/campaigns", validCampaign, []string{"Content-Type", "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"no content type", "PATCH", "/v1/bugs/bug_000001", `{"status":"confirmed"}`, []string{"Content-Type", ""}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"too large", "POST", "/v1/campaigns", `{"name":"` + strings.Repeat("a", 1<<20) + `"}`, nil, 413, "PAYLOAD_TOO_LARGE"},
		{"unknown campaign", "GET", "/v1/campaigns/cmp_999999", "", nil, 404, "NOT_FOUND"},
		{"unknown bug", "PATCH", "/v1/bugs/bug_999999", `{"status":"confirmed"}`, nil, 404, "NOT_FOUND"},
		{"unknown route", "GET", "/v1/nothing", "", nil, 404, "NOT_FOUND"},
		{"no version prefix", "GET", "/campaigns", "", nil, 404, "NOT_FOUND"},
		{"bad limit", "GET", "/v1/campaigns?limit=0", "", nil, 400, "INVALID_PARAMETER"},
		{"limit too big", "GET", "/v1/bugs?limit=101", "", nil, 400, "INVALID_PARAMETER"},
		{"limit not a number", "GET", "/v1/testers?limit=ten", "", nil, 400, "INVALID_PARAMETER"},
		{"forged cursor", "GET", "/v1/campaigns?cursor=abc", "", nil, 400, "INVALID_PARAMETER"},
		{"bad status filter", "GET", "/v1/bugs?status=open", "", nil, 400, "INVALID_PARAMETER"},
		{"bad severity filter", "GET", "/v1/bugs?severity=urgent", "", nil, 400, "INVALID_PARAMETER"},
		{"bad platform filter", "GET", "/v1/testers?platform=tvos", "", nil, 400, "INVALID_PARAMETER"},
		{"bad campaign filter", "GET", "/v1/campaigns?status=archived", "", nil, 400, "INVALID_PARAMETER"},
		{"analytics of unknown campaign", "GET", "/v1/analytics?campaignId=cmp_999999", "", nil, 404, "NOT_FOUND"},
		{"bad webhook", "POST", "/v1/webhooks", `{"url":"ftp://x","events":[]}`, nil, 400, "VALIDATION_ERROR"},
		{"bad bug status", "PATCH", "/v1/bugs/bug_000001", `{"status":"done"}`, nil, 400, "VALIDATION_ERROR"},
		{"empty bug patch", "PATCH", "/v1/bugs/bug_000001", `{}`, nil, 400, "VALIDATION_ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			c.fails(tt.method, tt.path, tt.body, tt.status, tt.code, tt.headers...)
		})
	}
}

func TestWrongMethodListsAllowedMethods(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	tests := []struct{ method, path, allow string }{
		{"DELETE", "/v1/campaigns", "GET, HEAD, POST"},
		{"PUT", "/v1/campaigns/cmp_000001", "GET, HEAD"},
		{"GET", "/v1/bugs/bug_000001", "PATCH"},
		{"GET", "/v1/webhooks", "POST"},
		{"POST", "/v1/testers", "GET, HEAD"},
		{"POST", "/v1/analytics", "GET, HEAD"},
	}
	for _, tt := range tests {
		res := c.fails(tt.method, tt.path, "", http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
		if got := res.header.Get("Allow"); got != tt.allow {
			t.Errorf("%s %s: Allow %q, want %q", tt.method, tt.path, got, tt.allow)
		}
	}
}

func TestAuthentication(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	tests := []struct {
		name, header, message string
	}{
		{"missing header", "", "missing"},
		{"basic scheme", "Basic dXNlcjpwYXNz", "Bearer"},
		{"empty key", "Bearer ", "empty"},
		{"live key", "Bearer svc_live_0123456789abcdef", "live keys are not accepted"},
		{"unknown prefix", "Bearer sk_test_0123456789abcdef", "unknown prefix"},
		{"no secret", "Bearer svc_test_", "malformed"},
		{"bad characters", "Bearer svc_test_abc!def", "malformed"},
		{"secret too long", "Bearer svc_test_" + strings.Repeat("a", 129), "malformed"},
		{"expired", "Bearer svc_test_expired0123456789", "expired"},
	}
	for _, path := range []string{"/v1/campaigns", "/v1/bugs", "/v1/testers", "/v1/analytics", "/v1/unknown", "/_sandbox/events"} {
		for _, tt := range tests {
			t.Run(path+"/"+tt.name, func(t *testing.T) {
				c.t = t
				res := c.withKey("").fails("GET", path, "", http.StatusUnauthorized, "INVALID_API_KEY", "Authorization", tt.header)
				if !strings.Contains(res.env.Error.Message, tt.message) {
					t.Errorf("message %q does not say %q", res.env.Error.Message, tt.message)
				}
				if !strings.HasPrefix(res.header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("WWW-Authenticate = %q", res.header.Get("WWW-Authenticate"))
				}
				if strings.Contains(string(res.raw), "0123456789abcdef") {
					t.Errorf("response echoes the key: %s", res.raw)
				}
			})
		}
	}
}

func TestLowercaseBearerSchemeIsAccepted(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	res := c.do("GET", "/v1/campaigns", "", "Authorization", "bearer "+testKey)
	if res.status != http.StatusOK {
		t.Fatalf("status %d: %s", res.status, res.raw)
	}
}

func TestAccountsAreIsolated(t *testing.T) {
	alice := newClient(t, sandboxtest.Options{})
	bob := alice.withKey("svc_test_bob_0123456789")
	var created campaign
	alice.ok("POST", "/v1/campaigns", validCampaign, &created)
	var bobs campaign
	bob.ok("POST", "/v1/campaigns", `{"name":"Bob's","platform":"web","testersRequired":1,"rewardPerBug":1}`, &bobs)
	if bobs.ID != created.ID {
		t.Errorf("fresh accounts gave different ids for the same request sequence: %s, %s", created.ID, bobs.ID)
	}
	var seen campaign
	bob.ok("GET", "/v1/campaigns/"+created.ID, "", &seen)
	if seen.Name != "Bob's" {
		t.Errorf("bob sees %q under the shared id, want his own campaign", seen.Name)
	}
	var list page[campaign]
	bob.ok("GET", "/v1/campaigns?limit=100", "", &list)
	for _, c := range list.Items {
		if c.Name == "Checkout" {
			t.Errorf("bob's list holds alice's campaign %+v", c)
		}
	}
	var bobBugs page[bug]
	bob.ok("GET", "/v1/bugs?status=new", "", &bobBugs)
	alice.ok("PATCH", "/v1/bugs/"+bobBugs.Items[0].ID, `{"status":"confirmed"}`, nil)
	var after page[bug]
	bob.ok("GET", "/v1/bugs?status=new", "", &after)
	if diff := cmp.Diff(bobBugs, after); diff != "" {
		t.Errorf("alice's patch changed bob's bugs:\n%s", diff)
	}
}

func TestSeededAccountHasEveryKindOfRecord(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	var campaigns page[campaign]
	c.ok("GET", "/v1/campaigns", "", &campaigns)
	var testers page[json.RawMessage]
	c.ok("GET", "/v1/testers", "", &testers)
	if len(campaigns.Items) < 3 || len(testers.Items) < 3 {
		t.Errorf("seeded %d campaigns and %d testers, want at least 3 each", len(campaigns.Items), len(testers.Items))
	}
	for _, status := range []string{"new", "confirmed", "in_progress", "resolved", "closed"} {
		var bugs page[bug]
		c.ok("GET", "/v1/bugs?status="+status, "", &bugs)
		if len(bugs.Items) == 0 {
			t.Errorf("no seeded bug is %s", status)
		}
		for _, b := range bugs.Items {
			if b.Status != status {
				t.Errorf("status filter %s returned a %s bug", status, b.Status)
			}
		}
	}
}

func TestPaginationWalksEveryRecordOnceNewestFirst(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	var created []string
	for i := range 23 {
		var got campaign
		c.ok("POST", "/v1/campaigns", fmt.Sprintf(`{"name":"c%d","platform":"android","testersRequired":1,"rewardPerBug":1}`, i), &got)
		created = append(created, got.ID)
	}
	var walked []string
	path := "/v1/campaigns?platform=android&limit=5"
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
		var p page[campaign]
		c.ok("GET", path, "", &p)
		for _, item := range p.Items {
			walked = append(walked, item.ID)
		}
		if p.HasMore != (p.NextCursor != nil) {
			t.Fatalf("hasMore %v with nextCursor %v", p.HasMore, p.NextCursor)
		}
		if !p.HasMore {
			break
		}
		path = "/v1/campaigns?platform=android&limit=5&cursor=" + *p.NextCursor
	}
	// The seed holds one android campaign, created before all of these.
	slices.Reverse(created)
	if diff := cmp.Diff(created, walked[:len(created)]); diff != "" || len(walked) != len(created)+1 {
		t.Errorf("walked %d ids, want %d newest first (-want +got):\n%s", len(walked), len(created)+1, diff)
	}
}

func TestBugListFilters(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	var all page[bug]
	c.ok("GET", "/v1/bugs?limit=100", "", &all)
	first := all.Items[0]
	tests := []struct {
		query string
		keep  func(bug) bool
	}{
		{"campaignId=" + first.CampaignID, func(b bug) bool { return b.CampaignID == first.CampaignID }},
		{"testerId=" + first.TesterID, func(b bug) bool { return b.TesterID == first.TesterID }},
		{"severity=high", func(b bug) bool { return b.Severity == "high" }},
		{"status=new&severity=low", func(b bug) bool { return b.Status == "new" && b.Severity == "low" }},
		{"campaignId=" + first.CampaignID + "&status=confirmed", func(b bug) bool { return b.CampaignID == first.CampaignID && b.Status == "confirmed" }},
		{"campaignId=cmp_999999", func(bug) bool { return false }},
	}
	for _, tt := range tests {
		var want []bug
		for _, b := range all.Items {
			if tt.keep(b) {
				want = append(want, b)
			}
		}
		var got page[bug]
		c.ok("GET", "/v1/bugs?limit=100&"+tt.query, "", &got)
		if diff := cmp.Diff(want, got.Items, cmp.Comparer(func(a, b []bug) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.query, diff)
		}
	}
}

func TestBugLifecycleOverHTTP(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	var fresh page[bug]
	c.ok("GET", "/v1/bugs?status=new&limit=1", "", &fresh)
	id := fresh.Items[0].ID
	path := "/v1/bugs/" + id

	before := c.do("GET", "/v1/bugs?limit=100", "")
	c.fails("PATCH", path, `{"status":"resolved","resolution":"fixed"}`, http.StatusConflict, "INVALID_STATUS_TRANSITION")
	c.fails("PATCH", path, `{"resolution":"fixed"}`, http.StatusConflict, "INVALID_STATUS_TRANSITION")
	c.fails("PATCH", path, `{"status":"closed"}`, http.StatusConflict, "INVALID_STATUS_TRANSITION")
	c.fails("PATCH", path, `{"status":"confirmed","resolution":"banana"}`, http.StatusBadRequest, "VALIDATION_ERROR")
	after := c.do("GET", "/v1/bugs?limit=100", "")
	if string(before.raw) != string(after.raw) {
		t.Fatal("a refused patch changed the bugs")
	}

	steps := []struct {
		body, status string
		resolution   *string
	}{
		{`{"status":"confirmed"}`, "confirmed", nil},
		{`{"status":"in_progress"}`, "in_progress", nil},
		{`{"status":"resolved","resolution":"fixed"}`, "resolved", ptr("fixed")},
		{`{"resolution":"duplicate"}`, "resolved", ptr("duplicate")},
		{`{"status":"closed"}`, "closed", ptr("duplicate")},
		{`{"status":"confirmed"}`, "confirmed", nil},
	}
	for _, step := range steps {
		var got bug
		c.ok("PATCH", path, step.body, &got)
		if got.Status != step.status || !cmp.Equal(got.Resolution, step.resolution) {
			t.Fatalf("after %s: status %s resolution %v, want %s %v", step.body, got.Status, got.Resolution, step.status, step.resolution)
		}
	}
}

func ptr(s string) *string { return &s }

func TestConcurrentCreatesGetDistinctIDs(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	keys := []string{testKey, "svc_test_second_account_key"}
	const writers = 300
	ids := make([]string, writers)
	failures := make([]string, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		// Only collect here: t.Fatal must not be called off the test goroutine.
		go func() {
			defer wg.Done()
			key := keys[i%len(keys)]
			req := httptest.NewRequest("POST", "/v1/campaigns", strings.NewReader(validCampaign))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			c.handler.ServeHTTP(rec, req)
			var body struct{ Data campaign }
			if err := json.Unmarshal(rec.Body.Bytes(), &body); rec.Code != http.StatusOK || err != nil {
				failures[i] = fmt.Sprintf("%d %s", rec.Code, rec.Body)
			}
			ids[i] = key + "/" + body.Data.ID
		}()
	}
	wg.Wait()
	for _, f := range failures {
		if f != "" {
			t.Fatalf("a concurrent create failed: %s", f)
		}
	}
	slices.Sort(ids)
	if distinct := len(slices.Compact(ids)); distinct != writers {
		t.Errorf("%d concurrent creates gave %d distinct ids", writers, distinct)
	}
	for _, key := range keys {
		var stats struct{ Campaigns int }
		c.withKey(key).ok("GET", "/v1/analytics", "", &stats)
		if want := 4 + writers/len(keys); stats.Campaigns != want {
			t.Errorf("%s holds %d campaigns, want %d: a concurrent create was lost or misfiled", sandbox.KeyHint(key), stats.Campaigns, want)
		}
	}
}

func TestWebhookRegistration(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	var got struct {
		ID        string   `json:"id"`
		URL       string   `json:"url"`
		Events    []string `json:"events"`
		Secret    string   `json:"secret"`
		Status    string   `json:"status"`
		CreatedAt string   `json:"createdAt"`
	}
	c.ok("POST", "/v1/webhooks", `{"url":"https://example.test/hook?a=1&b=2","events":["bug.created","bug.created","bug.updated"]}`, &got)
	if !strings.HasPrefix(got.ID, "whk_") || !strings.HasPrefix(got.Secret, "whsec_") || got.Status != "active" || got.URL != "https://example.test/hook?a=1&b=2" {
		t.Errorf("webhook = %+v", got)
	}
	if diff := cmp.Diff([]string{"bug.created", "bug.updated"}, got.Events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	res := c.fails("POST", "/v1/webhooks", `{"url":"/relative","events":["campaign.deleted","*","bug.closed"]}`, 400, "VALIDATION_ERROR")
	if len(res.env.Error.Details) != 2 {
		t.Errorf("details = %+v, want one for url and one for events", res.env.Error.Details)
	}
}

func TestTestersFilterByPlatform(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	var got page[struct {
		ID        string   `json:"id"`
		Platforms []string `json:"platforms"`
	}]
	c.ok("GET", "/v1/testers?platform=web&limit=1", "", &got)
	if len(got.Items) != 1 || !slices.Contains(got.Items[0].Platforms, "web") || !got.HasMore {
		t.Errorf("first web tester page = %+v", got)
	}
}

func TestAnalyticsFollowData(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	type stats struct {
		CampaignID *string `json:"campaignId"`
		Campaigns  int     `json:"campaigns"`
		Bugs       struct {
			Total      int            `json:"total"`
			ByStatus   map[string]int `json:"byStatus"`
			BySeverity map[string]int `json:"bySeverity"`
		} `json:"bugs"`
	}
	var before stats
	c.ok("GET", "/v1/analytics", "", &before)
	var created campaign
	c.ok("POST", "/v1/campaigns", validCampaign, &created)
	c.ok("POST", "/_sandbox/bugs", `{"campaignId":"`+created.ID+`","title":"Crash","severity":"critical"}`, nil)
	var after stats
	c.ok("GET", "/v1/analytics", "", &after)
	if after.Campaigns != before.Campaigns+1 || after.Bugs.Total != before.Bugs.Total+1 ||
		after.Bugs.ByStatus["new"] != before.Bugs.ByStatus["new"]+1 || after.Bugs.BySeverity["critical"] != before.Bugs.BySeverity["critical"]+1 {
		t.Errorf("analytics did not follow the new campaign and bug: before %+v after %+v", before, after)
	}
	var scoped stats
	c.ok("GET", "/v1/analytics?campaignId="+created.ID, "", &scoped)
	if scoped.CampaignID == nil || *scoped.CampaignID != created.ID || scoped.Campaigns != 1 || scoped.Bugs.Total != 1 || len(scoped.Bugs.ByStatus) != 5 || len(scoped.Bugs.BySeverity) != 4 {
		t.Errorf("campaign analytics = %+v", scoped)
	}
}

func TestAuthenticationComesBeforeTheBody(t *testing.T) {
	c := newClient(t, sandboxtest.Options{}).withKey("")
	c.fails("POST", "/v1/campaigns", `{"name":"`+strings.Repeat("a", 2<<20)+`"}`, http.StatusUnauthorized, "INVALID_API_KEY")
	c.fails("POST", "/v1/campaigns", "x", http.StatusUnauthorized, "INVALID_API_KEY", "Content-Type", "text/plain")
}

func TestHealthNeedsNoKey(t *testing.T) {
	c := newClient(t, sandboxtest.Options{}).withKey("")
	c.ok("GET", "/healthz", "", nil)
}

func TestUncleanPathsGetTheEnvelope(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	for _, path := range []string{"/v1/campaigns/..", "/v1/campaigns/.", "//v1/campaigns", "/v1//campaigns", "/v1/./campaigns", "/v1/bugs/.", "/v1/bugs/.."} {
		c.fails("GET", path, "", http.StatusNotFound, "NOT_FOUND")
	}
	// Not a bug named ".", nor 405 for a route that PATCH alone may take.
	c.fails("PATCH", "/v1/bugs/.", `{"status":"confirmed"}`, http.StatusNotFound, "NOT_FOUND")
}

func TestTextComesBackAsSent(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	res := c.do("POST", "/v1/campaigns", `{"name":"R&D <beta>","platform":"web","testersRequired":1,"rewardPerBug":1}`)
	if res.status != http.StatusOK || !bytes.Contains(res.raw, []byte(`"name":"R&D <beta>"`)) {
		t.Errorf("the name came back as %s", res.raw)
	}
}
