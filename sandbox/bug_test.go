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
