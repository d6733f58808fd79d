package conformance

import (
	"bytes"
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
	}{
		{"live key, writes", live, runEnv{}, []string{"@writes"}, "live key"},
		{"live key, writes allowed", Config{APIKey: live.APIKey, Profile: ProfileSpec, AllowWrites: true}, runEnv{}, []string{"@writes"}, ""},
		{"live key, exhaustive opted in", Config{APIKey: live.APIKey, Exhaustive: true}, runEnv{}, []string{"@exhaustive"}, "live key"},
		{"test key, exhaustive not opted in", Config{APIKey: TestPrefix + "k"}, runEnv{}, []string{"@exhaustive"}, "pass --exhaustive"},
		{"sandbox scenario, spec profile", Config{APIKey: TestPrefix + "k", Profile: ProfileSpec}, runEnv{}, []string{"@sandbox"}, "--profile sandbox"},
		{"sandbox scenario, sandbox profile", Config{APIKey: TestPrefix + "k", Profile: ProfileSandbox}, runEnv{}, []string{"@sandbox", "@writes"}, ""},
		{"seed scenario, other fixtures", Config{APIKey: TestPrefix + "k", Profile: ProfileSandbox}, runEnv{receiver: true}, []string{"@sandbox", "@seed"}, "built-in seed"},
		{"seed scenario, built-in seed", Config{APIKey: TestPrefix + "k", Profile: ProfileSandbox}, runEnv{seeded: true, receiver: true}, []string{"@sandbox", "@seed"}, ""},
		{"delivery scenario, no receiver", Config{APIKey: TestPrefix + "k", Profile: ProfileSandbox}, runEnv{seeded: true}, []string{"@sandbox", "@delivery"}, "receiver"},
	}
	for _, tt := range tests {
		got := skipReason(tt.cfg, tt.env, tt.tags)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: skipReason = %q, want it to say %q", tt.name, got, tt.want)
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
