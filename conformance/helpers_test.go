package conformance

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := decodeJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestLookup(t *testing.T) {
	doc := mustJSON(t, `{"data": {"items": [{"id": "a"}, {"id": "b"}]}, "success": true}`)
	tests := []struct {
		path    string
		want    any
		wantErr string
	}{
		{"success", true, ""},
		{"data.items.1.id", "b", ""},
		{"data.items[0].id", "a", ""},
		{"data.items.2.id", nil, "has 2 item(s)"},
		{"data.missing", nil, `keys at "data": items`},
		{"success.x", nil, "not an object or array"},
	}
	for _, tt := range tests {
		got, err := lookup(doc, tt.path)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("lookup(%q) error %v, want it to mention %q", tt.path, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("lookup(%q) = %v, %v; want %v", tt.path, got, err, tt.want)
		}
	}
}

func TestMatchDiff(t *testing.T) {
	tests := []struct {
		name, want, got string
		match           bool
	}{
		{"placeholders and extra keys", `{"id": "<id>", "at": "<timestamp>", "n": "<integer>"}`, `{"id": "cmp_1", "at": "2026-01-02T03:04:05Z", "n": 3, "extra": 1}`, true},
		{"numbers by value", `{"r": 20}`, `{"r": 20.0}`, true},
		{"decimals exact", `{"r": 19.99}`, `{"r": 19.990001}`, false},
		{"integer placeholder refuses decimals", `{"n": "<integer>"}`, `{"n": 3.5}`, false},
		{"missing key", `{"status": "draft"}`, `{}`, false},
		{"string or null", `{"r": "<string|null>"}`, `{"r": null}`, true},
		{"timestamp refuses Unix numbers", `{"at": "<timestamp>"}`, `{"at": 1700000000}`, false},
		{"arrays item by item", `["a", "<string>"]`, `["a", "b", "c"]`, false},
	}
	for _, tt := range tests {
		d := matchDiff(mustJSON(t, tt.want), mustJSON(t, tt.got))
		if (d == "") != tt.match {
			t.Errorf("%s: match %v, want %v; diff:\n%s", tt.name, d == "", tt.match, d)
		}
	}
}

// TestMatchDiffIsJSON checks that a difference reads as the JSON the author
// wrote, not as Go syntax.
func TestMatchDiffIsJSON(t *testing.T) {
	d := matchDiff(mustJSON(t, `{"status": "draft", "name": "<string>"}`), mustJSON(t, `{"status": "active", "name": "x"}`))
	want := "  {\n    \"name\": \"<string>\",\n-   \"status\": \"draft\"\n+   \"status\": \"active\"\n  }\n"
	if d != want {
		t.Errorf("diff:\n%s\nwant:\n%s", d, want)
	}
	for _, goSyntax := range []string{"map[string]any", "json.Number", "string(\""} {
		if strings.Contains(d, goSyntax) {
			t.Errorf("the diff shows Go syntax %q:\n%s", goSyntax, d)
		}
	}
}

func TestMatchTags(t *testing.T) {
	tags := []string{"@auth", "@must", "@stable"}
	tests := []struct {
		expr string
		want bool
	}{
		{"", true},
		{"@auth", true},
		{"@envelope,@auth", true},
		{"@auth && ~@must", false},
		{"~@writes", true},
		{"@auth && @beta", false},
		{"auth", true},
	}
	for _, tt := range tests {
		if got := matchTags(tt.expr, tags); got != tt.want {
			t.Errorf("matchTags(%q) = %v, want %v", tt.expr, got, tt.want)
		}
	}
}

func TestSkipReason(t *testing.T) {
	live := Config{APIKey: LivePrefix + "abcdefghijkl", Profile: ProfileSpec}
	tests := []struct {
		name string
		cfg  Config
		env  runEnv
		tags []string
		want string
		as   Status
	}{
		{"live key, writes", live, runEnv{}, []string{"@writes"}, "live key", Disabled},
		{"live key, writes allowed", Config{APIKey: live.APIKey, Profile: ProfileSpec, AllowWrites: true}, runEnv{}, []string{"@writes"}, "", Passed},
		{"live key, exhaustive opted in", Config{APIKey: live.APIKey, Exhaustive: true}, runEnv{}, []string{"@exhaustive"}, "live key", Disabled},
		{"test key, exhaustive not opted in", Config{APIKey: TestPrefix + "k"}, runEnv{}, []string{"@exhaustive"}, "pass --exhaustive", Disabled},
		{"sandbox scenario, spec profile", Config{APIKey: TestPrefix + "k", Profile: ProfileSpec}, runEnv{}, []string{"@sandbox"}, "--profile sandbox", Disabled},
		{"sandbox scenario, sandbox profile", Config{APIKey: TestPrefix + "k", Profile: ProfileSandbox}, runEnv{}, []string{"@sandbox", "@writes"}, "", Passed},
		{"seed scenario, other fixtures", Config{APIKey: TestPrefix + "k", Profile: ProfileSandbox}, runEnv{}, []string{"@sandbox", "@seed"}, "built-in seed", Skipped},
		{"seed scenario, built-in seed", Config{APIKey: TestPrefix + "k", Profile: ProfileSandbox}, runEnv{seeded: true}, []string{"@sandbox", "@seed"}, "", Passed},
		{"delivery scenario, receiver off", Config{APIKey: TestPrefix + "k", Profile: ProfileSandbox, WebhookListen: "off"}, runEnv{seeded: true, noReceiver: "it is off"}, []string{"@sandbox", "@delivery"}, "receiver", Disabled},
		{"delivery scenario, receiver unreachable", Config{APIKey: TestPrefix + "k", Profile: ProfileSandbox}, runEnv{seeded: true, noReceiver: "it listens on loopback"}, []string{"@sandbox", "@delivery"}, "loopback", Skipped},
	}
	for _, tt := range tests {
		got, as := skipReason(tt.cfg, tt.env, tt.tags)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: skipReason = %q, want it to say %q", tt.name, got, tt.want)
		}
		if got != "" && as != tt.as {
			t.Errorf("%s: counted as %s, want %s", tt.name, as, tt.as)
		}
		// godog's filter must drop exactly what skipReason skips.
		if kept := matchTags(strings.Join(exclusionTags(tt.cfg, tt.env), " && "), tt.tags); kept != (got == "") {
			t.Errorf("%s: exclusion tags keep=%v, but skip reason %q", tt.name, kept, got)
		}
	}
}

func TestRedaction(t *testing.T) {
	tests := []struct{ key, want string }{
		{"svc_live_0123456789abcd", "svc_live_…abcd"},
		{"svc_test_short", "svc_test_****"},
		{"opaque-token-wxyz", "…wxyz"},
	}
	for _, tt := range tests {
		if got := RedactKey(tt.key); got != tt.want {
			t.Errorf("RedactKey(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}

	const key = "svc_test_secret_value_1234"
	var out bytes.Buffer
	w := newRedactingWriter(&out, key)
	// A key split across writes must still be caught.
	for _, part := range []string{"auth: Bearer svc_test_sec", "ret_value_1234\nnext ", key} {
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), key) || strings.Count(out.String(), "svc_test_…1234") != 2 {
		t.Errorf("redacted output %q", out.String())
	}
}

func TestResetPlausible(t *testing.T) {
	now := time.Now()
	tests := []struct {
		reset int64
		want  bool
	}{
		{42, true},                               // seconds until the reset
		{now.Add(30 * time.Second).Unix(), true}, // Unix seconds
		{now.Add(time.Hour).UnixMilli(), true},   // Unix milliseconds
		{now.Add(48 * time.Hour).Unix(), false},  // beyond the longest window
		{now.Add(-24 * time.Hour).Unix(), false}, // in the past
		{1234567, false},                         // none of the readings
	}
	for _, tt := range tests {
		e := &exchange{header: map[string][]string{
			"X-Ratelimit-Limit": {"1000"}, "X-Ratelimit-Remaining": {"10"}, "X-Ratelimit-Reset": {strconv.FormatInt(tt.reset, 10)},
		}}
		s := &scenarioState{history: []*exchange{e}}
		err := resetPlausible(withState(t.Context(), s))
		if (err == nil) != tt.want {
			t.Errorf("reset %d: err %v, want plausible=%v", tt.reset, err, tt.want)
		}
	}
}

func TestResetJudgedByTheServersClock(t *testing.T) {
	frozen := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		body  string
		reset int64
		want  bool
	}{
		{"frozen clock, reset at its minute's end", `{"success":true,"data":{"createdAt":"2026-01-01T00:00:00.000Z"}}`, frozen.Add(time.Minute).Unix(), true},
		{"frozen clock, reset a year away", `{"success":true,"data":{"createdAt":"2026-01-01T00:00:00.000Z"}}`, frozen.Add(365 * 24 * time.Hour).Unix(), false},
	}
	for _, tt := range tests {
		e := &exchange{method: "POST", body: []byte(tt.body), header: map[string][]string{
			"X-Ratelimit-Limit": {"1000"}, "X-Ratelimit-Remaining": {"10"}, "X-Ratelimit-Reset": {strconv.FormatInt(tt.reset, 10)},
		}}
		s := &scenarioState{history: []*exchange{e}}
		if err := resetPlausible(withState(t.Context(), s)); (err == nil) != tt.want {
			t.Errorf("%s: err %v, want plausible=%v", tt.name, err, tt.want)
		}
	}
}

func TestRemainingDecreased(t *testing.T) {
	now := time.Now()
	hdr := func(remaining int, reset time.Time) *exchange {
		return &exchange{header: map[string][]string{
			"Date":              {now.UTC().Format(http.TimeFormat)},
			"X-Ratelimit-Limit": {"1000"}, "X-Ratelimit-Remaining": {strconv.Itoa(remaining)}, "X-Ratelimit-Reset": {strconv.FormatInt(reset.Unix(), 10)},
		}}
	}
	tests := []struct {
		name       string
		prev, last *exchange
		want       bool
	}{
		{"counts down", hdr(10, now.Add(30*time.Second)), hdr(9, now.Add(30*time.Second)), true},
		{"unchanged", hdr(10, now.Add(30*time.Second)), hdr(10, now.Add(30*time.Second)), false},
		{"reset moved later but the window has not ended", hdr(10, now.Add(30*time.Second)), hdr(10, now.Add(40*time.Second)), false},
		{"a new window", hdr(10, now.Add(-time.Second)), hdr(999, now.Add(60*time.Second)), true},
	}
	for _, tt := range tests {
		s := &scenarioState{history: []*exchange{tt.prev, tt.last}}
		if err := remainingDecreased(withState(t.Context(), s)); (err == nil) != tt.want {
			t.Errorf("%s: err %v, want pass=%v", tt.name, err, tt.want)
		}
	}
}

func TestLimitPublished(t *testing.T) {
	now := time.Now()
	tests := []struct {
		limit int
		reset time.Time
		want  bool
	}{
		{1000, now.Add(30 * time.Second), true},
		{50, now.Add(30 * time.Second), true}, // a sandbox started with -rate-limit-minute 50
		{5000, now.Add(30 * time.Second), false},
		{5000, now.Add(30 * time.Minute), true}, // an hour window
		{200000, now.Add(12 * time.Hour), false},
		{0, now.Add(30 * time.Second), false},
	}
	for _, tt := range tests {
		e := &exchange{header: map[string][]string{
			"X-Ratelimit-Limit": {strconv.Itoa(tt.limit)}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(tt.reset.Unix(), 10)},
		}}
		s := &scenarioState{history: []*exchange{e}}
		if err := limitPublished(withState(t.Context(), s)); (err == nil) != tt.want {
			t.Errorf("limit %d reset in %s: err %v, want pass=%v", tt.limit, time.Until(tt.reset).Round(time.Minute), err, tt.want)
		}
	}
}

func TestCheckOrder(t *testing.T) {
	tests := []struct {
		name, items string
		descending  bool
		wantErr     string
	}{
		{"timestamps as instants, zeros trimmed", `[{"t":"2026-01-01T00:00:00.5Z"},{"t":"2026-01-01T00:00:00.45Z"}]`, true, ""},
		{"timestamps in other zones", `[{"t":"2026-01-01T02:00:00+02:00"},{"t":"2025-12-31T23:30:00Z"}]`, true, ""},
		{"out of order", `[{"t":"2026-01-01T00:00:00.45Z"},{"t":"2026-01-01T00:00:00.5Z"}]`, true, "not ordered"},
		{"numbers as numbers", `[{"t":9},{"t":10}]`, false, ""},
		{"numbers out of order", `[{"t":10},{"t":9}]`, false, "not ordered"},
		{"values of different kinds", `[{"t":"2026-01-01T00:00:00Z"},{"t":3}]`, true, "cannot order"},
		{"text that is no timestamp", `[{"t":"b"},{"t":"a"}]`, true, "cannot order"},
	}
	for _, tt := range tests {
		err := checkOrder(mustJSON(t, tt.items).([]any), "items", "t", tt.descending)
		if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestEveryItemFailsOnAnEmptyList(t *testing.T) {
	e := &exchange{body: []byte(`{"data":{"items":[]}}`)}
	s := newScenarioState(&target{redact: redactor("")})
	s.history = []*exchange{e}
	if err := everyItemHas(withState(t.Context(), s), "data.items", "status", "new"); err == nil {
		t.Error("every item of an empty list passed; want a failure")
	}
}

func TestValidateTags(t *testing.T) {
	tests := []struct {
		expr string
		ok   bool
	}{
		{"", true},
		{"@auth", true},
		{"@auth,@envelope && ~@should", true},
		{"@auth&&", false},
		{"&&@auth", false},
		{"@auth,,@bugs", false},
		{"auth", false},
		{"@au th", false},
	}
	for _, tt := range tests {
		if err := validateTags(tt.expr); (err == nil) != tt.ok {
			t.Errorf("validateTags(%q) = %v, want ok=%v", tt.expr, err, tt.ok)
		}
	}
}

func TestExpandTargetEncodes(t *testing.T) {
	s := newScenarioState(&target{redact: redactor("")})
	s.saved["id"] = "a/b?c"
	s.saved["q"] = "x&y=z #"
	got, err := s.expandTarget("/v1/campaigns/{id}?name={q}&limit=1")
	if want := "/v1/campaigns/a%2Fb%3Fc?name=x%26y%3Dz+%23&limit=1"; err != nil || got != want {
		t.Errorf("expandTarget = %q, %v; want %q", got, err, want)
	}
}

// TestRedactBeforeTruncate puts the key right where a report cuts the body;
// no part of the secret beyond its last four characters may show.
func TestRedactBeforeTruncate(t *testing.T) {
	const key = "svc_test_0123456789abcdefghij"
	s := newScenarioState(&target{key: key, redact: redactor(key)})
	body := `{"m":"` + strings.Repeat("x", 280) + key + `"}`
	line := s.responseLine(&exchange{status: 401, header: http.Header{}, body: []byte(body)})
	if strings.Contains(line, "0123456") {
		t.Errorf("the report shows part of the secret: %s", line)
	}
}

func TestReceiverProblem(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"local deployment, loopback receiver", Config{BaseURL: "http://127.0.0.1:8080", WebhookListen: "127.0.0.1:0"}, ""},
		{"localhost deployment", Config{BaseURL: "http://localhost:8080", WebhookListen: "127.0.0.1:0"}, ""},
		{"remote deployment, loopback receiver", Config{BaseURL: "https://api.example.com", WebhookListen: "127.0.0.1:0"}, "cannot reach"},
		{"remote deployment through a tunnel", Config{BaseURL: "https://api.example.com", WebhookListen: "127.0.0.1:9099", WebhookURL: "https://hooks.example.net"}, ""},
		{"every interface without a URL", Config{BaseURL: "http://127.0.0.1:8080", WebhookListen: "0.0.0.0:9099"}, "every interface"},
		{"off", Config{BaseURL: "http://127.0.0.1:8080", WebhookListen: "off"}, "off"},
	}
	for _, tt := range tests {
		got := receiverProblem(tt.cfg)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: receiverProblem = %q, want it to say %q", tt.name, got, tt.want)
		}
	}
}

func TestLeaks(t *testing.T) {
	const key = "svc_test_0123456789abcdef"
	tests := []struct {
		text string
		want bool
	}{
		{"key svc_test_…cdef refused", false},
		{"key svc_test_0123456789abcdef refused", true},
		{"secret 0123456789abcdef refused", true},
		{"key svc_test_0123456789ab… refused", true},
		{"nothing here", false},
	}
	for _, tt := range tests {
		if got := leaks([]byte(tt.text), key); got != tt.want {
			t.Errorf("leaks(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestBurstWaitsForAWindowItFits(t *testing.T) {
	now := time.Date(2026, 11, 23, 16, 3, 59, 0, time.UTC)
	answer := func(reset time.Time) *exchange {
		return &exchange{header: map[string][]string{
			"Date":              {now.Format(http.TimeFormat)},
			"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Remaining": {"5"}, "X-Ratelimit-Reset": {strconv.FormatInt(reset.Unix(), 10)},
		}}
	}
	tests := []struct {
		name      string
		reset     time.Time
		roundTrip time.Duration
		fits      bool
	}{
		{"a second before the minute ends", now.Add(time.Second), time.Millisecond, false},
		{"most of the minute left", now.Add(50 * time.Second), time.Millisecond, true},
		{"slow answers eat what is left", now.Add(10 * time.Second), 2 * time.Second, false},
		{"an hour window", now.Add(57 * time.Minute), 100 * time.Millisecond, true},
	}
	for _, tt := range tests {
		left, ok := windowLeft(answer(tt.reset))
		if !ok {
			t.Fatalf("%s: reset not read", tt.name)
		}
		if got := burstFits(left, 5, tt.roundTrip); got != tt.fits {
			t.Errorf("%s: %v left, burst fits = %v, want %v", tt.name, left, got, tt.fits)
		}
	}
}
