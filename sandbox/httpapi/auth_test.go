package httpapi_test

import (
	"testing"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/httpapi"
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
		key, err := httpapi.ParseAuthorization(tt.header)
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
