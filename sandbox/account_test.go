package sandbox_test

import (
	"testing"

	"github.com/testcampaign/kit/sandbox"
)

func TestParseAuthorization(t *testing.T) {
	tests := []struct {
		header string
		valid  bool
	}{
		{"Bearer svc_test_abc", true},
		{"bEaReR svc_test_A-b_9", true},
		{"Bearer  svc_test_padded ", true},
		{"", false},
		{"Bearer", false},
		{"Token svc_test_abc", false},
		{"Bearer svc_live_abc", false},
		{"Bearer svc_test_", false},
		{"Bearer svc_test_a b", false},
		{"Bearer svc_test_expiredKey", false},
		{"Bearer svc_test_é", false},
	}
	for _, tt := range tests {
		key, err := sandbox.ParseAuthorization(tt.header)
		if (err == nil) != tt.valid {
			t.Errorf("%q: err = %v, want valid %v", tt.header, err, tt.valid)
		}
		if err != nil && sandbox.AsError(err).Code != sandbox.ErrInvalidAPIKey {
			t.Errorf("%q: code %s", tt.header, sandbox.AsError(err).Code)
		}
		if err == nil && key == "" {
			t.Errorf("%q: empty key", tt.header)
		}
	}
}

func TestKeyHintNeverShowsTheSecret(t *testing.T) {
	tests := map[string]string{
		"svc_test_0123456789abcdef": "svc_test_…cdef",
		"svc_test_short":            "svc_test_…",
		"svc_live_0123456789abcdef": "svc_live_…cdef",
		"other-key-0123456789":      "…6789",
	}
	for key, want := range tests {
		if got := sandbox.KeyHint(key); got != want {
			t.Errorf("KeyHint(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestAccountsDependOnlyOnTheKey(t *testing.T) {
	a, b := sandbox.AccountForKey("svc_test_one"), sandbox.AccountForKey("svc_test_two")
	if a.ID == b.ID || a != sandbox.AccountForKey("svc_test_one") {
		t.Errorf("account ids: %s %s", a.ID, b.ID)
	}
}
