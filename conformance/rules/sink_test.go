package rules

import (
	"testing"
)

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
