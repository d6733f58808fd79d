package sandbox_test

import (
	"testing"

	"github.com/testcampaign/kit/sandbox"
)

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
