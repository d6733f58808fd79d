package wire

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := DecodeJSON([]byte(s))
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
		got, err := Lookup(doc, tt.path)
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
		{"timestamp in ISO 8601 basic format", `{"at": "<timestamp>"}`, `{"at": "20261127T062614Z"}`, true},
		{"timestamp as Python's isoformat", `{"at": "<timestamp>"}`, `{"at": "2026-11-27T06:26:14.123456+00:00"}`, true},
		{"timestamp refuses a day-first date", `{"at": "<timestamp>"}`, `{"at": "27/11/2026 06:26"}`, false},
		{"timestamp refuses Unix numbers", `{"at": "<timestamp>"}`, `{"at": 1700000000}`, false},
		{"arrays item by item", `["a", "<string>"]`, `["a", "b", "c"]`, false},
	}
	for _, tt := range tests {
		d := MatchDiff(mustJSON(t, tt.want), mustJSON(t, tt.got))
		if (d == "") != tt.match {
			t.Errorf("%s: match %v, want %v; diff:\n%s", tt.name, d == "", tt.match, d)
		}
	}
}

// TestMatchDiffIsJSON checks that a difference reads as the JSON the author
// wrote, not as Go syntax.
func TestMatchDiffIsJSON(t *testing.T) {
	d := MatchDiff(mustJSON(t, `{"status": "draft", "name": "<string>"}`), mustJSON(t, `{"status": "active", "name": "x"}`))
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
	w := NewRedactingWriter(&out, key)
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

func TestTruncateKeepsWholeCharacters(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc…"},
		{"café ☕ x", 4, "caf…"},
		{"café ☕ x", 5, "café…"},
		{"☕☕", 4, "☕…"},
		{"☕", 1, "…"},
	} {
		got := Truncate(tt.in, tt.n)
		if got != tt.want || !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
