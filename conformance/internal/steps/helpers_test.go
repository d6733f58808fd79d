package steps

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"

	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/transport"
)

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
		e := &wire.Exchange{Header: map[string][]string{
			"X-Ratelimit-Limit": {"1000"}, "X-Ratelimit-Remaining": {"10"}, "X-Ratelimit-Reset": {strconv.FormatInt(tt.reset, 10)},
		}}
		s := sent(&scenarioState{}, e)
		err := s.resetPlausible(t.Context())
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
		e := &wire.Exchange{Method: "POST", Body: []byte(tt.body), Header: map[string][]string{
			"X-Ratelimit-Limit": {"1000"}, "X-Ratelimit-Remaining": {"10"}, "X-Ratelimit-Reset": {strconv.FormatInt(tt.reset, 10)},
		}}
		s := sent(&scenarioState{}, e)
		if err := s.resetPlausible(t.Context()); (err == nil) != tt.want {
			t.Errorf("%s: err %v, want plausible=%v", tt.name, err, tt.want)
		}
	}
}

func TestRemainingDecreased(t *testing.T) {
	now := time.Now()
	hdr := func(remaining int, reset time.Time, sent time.Duration) *wire.Exchange {
		return &wire.Exchange{Sent: now.Add(sent), Elapsed: time.Millisecond, Header: map[string][]string{
			"Date":              {now.UTC().Format(http.TimeFormat)},
			"X-Ratelimit-Limit": {"1000"}, "X-Ratelimit-Remaining": {strconv.Itoa(remaining)}, "X-Ratelimit-Reset": {strconv.FormatInt(reset.Unix(), 10)},
		}}
	}
	in30s, in40s := now.Add(30*time.Second), now.Add(40*time.Second)
	tests := []struct {
		name       string
		profile    string
		prev, last *wire.Exchange
		want       bool
	}{
		{"counts down", kit.ProfileSandbox, hdr(10, in30s, 0), hdr(9, in30s, 0), true},
		{"unchanged", kit.ProfileSandbox, hdr(10, in30s, 0), hdr(10, in30s, 0), false},
		{"reset moved later but the window has not ended", kit.ProfileSandbox, hdr(10, in30s, 0), hdr(10, in40s, 0), false},
		{"a new window", kit.ProfileSandbox, hdr(10, now.Add(-time.Second), 0), hdr(999, now.Add(60*time.Second), 0), true},
		{"counts down at spec level", kit.ProfileSpec, hdr(10, in30s, 0), hdr(9, in30s, 2*time.Second), true},
		// 1000 a minute give back at most one request in 60 ms.
		{"counts up faster than any refill", kit.ProfileSpec, hdr(10, in30s, 0), hdr(11, in30s, 10*time.Millisecond), false},
		{"a new window at spec level", kit.ProfileSpec, hdr(10, now.Add(-time.Second), 0), hdr(999, now.Add(60*time.Second), 0), true},
	}
	for _, tt := range tests {
		s := sent(&scenarioState{t: &transport.Target{Profile: tt.profile}}, tt.prev, tt.last)
		if err := s.remainingDecreased(t.Context()); (err == nil) != tt.want {
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
		e := &wire.Exchange{Header: map[string][]string{
			"X-Ratelimit-Limit": {strconv.Itoa(tt.limit)}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(tt.reset.Unix(), 10)},
		}}
		s := sent(&scenarioState{}, e)
		if err := s.limitPublished(t.Context()); (err == nil) != tt.want {
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
	e := &wire.Exchange{Body: []byte(`{"data":{"items":[]}}`)}
	s := newScenarioState(&transport.Target{Redact: wire.Redactor("")}, nil)
	sent(s, e)
	if err := s.everyItemHas(t.Context(), "data.items", "status", "new"); err == nil {
		t.Error("every item of an empty list passed; want a failure")
	}
}

func TestExpandTargetEncodes(t *testing.T) {
	s := newScenarioState(&transport.Target{Redact: wire.Redactor("")}, nil)
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
	s := newScenarioState(&transport.Target{Key: key, Redact: wire.Redactor(key)}, nil)
	body := `{"m":"` + strings.Repeat("x", 280) + key + `"}`
	line := s.responseLine(&wire.Exchange{Status: 401, Header: http.Header{}, Body: []byte(body)})
	if strings.Contains(line, "0123456") {
		t.Errorf("the report shows part of the secret: %s", line)
	}
}

func TestBurstWaitsForAWindowItFits(t *testing.T) {
	now := time.Date(2026, 11, 23, 16, 3, 59, 0, time.UTC)
	answer := func(reset time.Time) *wire.Exchange {
		return &wire.Exchange{Header: map[string][]string{
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
		left, ok := rules.WindowLeft(answer(tt.reset))
		if !ok {
			t.Fatalf("%s: reset not read", tt.name)
		}
		if got := burstFits(left, 5, tt.roundTrip); got != tt.fits {
			t.Errorf("%s: %v left, burst fits = %v, want %v", tt.name, left, got, tt.fits)
		}
	}
}

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := wire.DecodeJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// sent is s after it sent the exchanges, in order.
func sent(s *scenarioState, es ...*wire.Exchange) *scenarioState {
	for _, e := range es {
		s.record(e)
	}
	return s
}
