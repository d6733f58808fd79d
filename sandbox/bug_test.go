package sandbox_test

import (
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox"
)

func TestBugApply(t *testing.T) {
	now := sandbox.At(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	fixed, dup := "fixed", "duplicate"
	tests := []struct {
		name           string
		status         string
		resolution     *string
		patchStatus    string
		patchRes       string
		wantStatus     string
		wantResolution *string
		wantErr        bool
	}{
		{"confirm new", "new", nil, "confirmed", "", "confirmed", nil, false},
		{"close new with resolution", "new", nil, "closed", "not_a_bug", "closed", ptr("not_a_bug"), false},
		{"close new without resolution", "new", nil, "closed", "", "", nil, true},
		{"resolve new", "new", nil, "resolved", "fixed", "", nil, true},
		{"start confirmed", "confirmed", nil, "in_progress", "", "in_progress", nil, false},
		{"resolve confirmed", "confirmed", nil, "resolved", "fixed", "resolved", &fixed, false},
		{"back to new", "confirmed", nil, "new", "", "", nil, true},
		{"resolve in progress", "in_progress", nil, "resolved", "cannot_reproduce", "resolved", ptr("cannot_reproduce"), false},
		{"confirm in progress", "in_progress", nil, "confirmed", "", "", nil, true},
		{"close resolved keeps resolution", "resolved", &fixed, "closed", "", "closed", &fixed, false},
		{"close resolved with new resolution", "resolved", &fixed, "closed", "duplicate", "closed", &dup, false},
		{"reopen resolved clears resolution", "resolved", &fixed, "confirmed", "", "confirmed", nil, false},
		{"reopen closed clears resolution", "closed", &fixed, "confirmed", "", "confirmed", nil, false},
		{"reopen with resolution", "closed", &fixed, "confirmed", "fixed", "", nil, true},
		{"closed to in progress", "closed", &fixed, "in_progress", "", "", nil, true},
		{"change resolution of resolved", "resolved", &fixed, "", "duplicate", "resolved", &dup, false},
		{"resolution on open bug", "confirmed", nil, "", "fixed", "", nil, true},
		{"same status is no move", "new", nil, "new", "", "new", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := sandbox.Bug{ID: "bug_1", Status: tt.status, Resolution: tt.resolution}
			var patch sandbox.BugPatch
			if tt.patchStatus != "" {
				patch.Status = &tt.patchStatus
			}
			if tt.patchRes != "" {
				patch.Resolution = &tt.patchRes
			}
			got, changed, err := before.Apply(patch, now)
			if tt.wantErr {
				if sandbox.AsError(err).Code != sandbox.ErrInvalidStatusTransition {
					t.Fatalf("err = %v, want INVALID_STATUS_TRANSITION", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got.Status != tt.wantStatus || !equal(got.Resolution, tt.wantResolution) {
				t.Errorf("got %s/%v, want %s/%v", got.Status, deref(got.Resolution), tt.wantStatus, deref(tt.wantResolution))
			}
			wantChanged := got.Status != tt.status || !equal(got.Resolution, tt.resolution)
			if changed != wantChanged || (got.UpdatedAt == now) != wantChanged {
				t.Errorf("changed = %v, updatedAt %v; want changed %v", changed, got.UpdatedAt, wantChanged)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func equal(a, b *string) bool { return deref(a) == deref(b) }

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

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

func TestPageRequest(t *testing.T) {
	next := sandbox.NewPage([]int{1}, true, 42)
	req, err := sandbox.ParsePageRequest("7", *next.NextCursor)
	if err != nil || req.Limit != 7 || req.Before != 42 {
		t.Errorf("round trip: %+v, %v", req, err)
	}
	if last := sandbox.NewPage[int](nil, false, 0); last.NextCursor != nil || last.Items == nil {
		t.Errorf("last page = %+v, want empty items and no cursor", last)
	}
	for _, bad := range [][2]string{{"0", ""}, {"101", ""}, {"-1", ""}, {"1.5", ""}, {"", "YzEuMA"}, {"", "!!"}, {"", "eDEuNDI"}} {
		if _, err := sandbox.ParsePageRequest(bad[0], bad[1]); sandbox.AsError(err).Code != sandbox.ErrInvalidParameter {
			t.Errorf("limit %q cursor %q: err = %v", bad[0], bad[1], err)
		}
	}
}
