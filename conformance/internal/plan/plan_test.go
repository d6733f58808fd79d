package plan

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/testcampaign/kit/conformance/internal/report"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

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
	live := PlanOptions{APIKey: wire.LivePrefix + "abcdefghijkl", Profile: wire.ProfileSpec}
	tests := []struct {
		name string
		cfg  PlanOptions
		env  RunEnv
		tags []string
		want string
		as   report.Status
	}{
		{"live key, writes", live, RunEnv{}, []string{"@writes"}, "live key", report.Disabled},
		{"live key, writes allowed", PlanOptions{APIKey: live.APIKey, Profile: wire.ProfileSpec, AllowWrites: true}, RunEnv{}, []string{"@writes"}, "", report.Passed},
		{"live key, exhaustive opted in", PlanOptions{APIKey: live.APIKey, Exhaustive: true}, RunEnv{}, []string{"@exhaustive"}, "live key", report.Disabled},
		{"test key, exhaustive not opted in", PlanOptions{APIKey: wire.TestPrefix + "k"}, RunEnv{}, []string{"@exhaustive"}, "pass --exhaustive", report.Disabled},
		{"sandbox scenario, spec profile", PlanOptions{APIKey: wire.TestPrefix + "k", Profile: wire.ProfileSpec}, RunEnv{}, []string{"@sandbox"}, "--profile sandbox", report.Disabled},
		{"sandbox scenario, sandbox profile", PlanOptions{APIKey: wire.TestPrefix + "k", Profile: wire.ProfileSandbox}, RunEnv{}, []string{"@sandbox", "@writes"}, "", report.Passed},
		{"seed scenario, other fixtures", PlanOptions{APIKey: wire.TestPrefix + "k", Profile: wire.ProfileSandbox}, RunEnv{}, []string{"@sandbox", "@seed"}, "built-in seed", report.Skipped},
		{"seed scenario, built-in seed", PlanOptions{APIKey: wire.TestPrefix + "k", Profile: wire.ProfileSandbox}, RunEnv{Seeded: true}, []string{"@sandbox", "@seed"}, "", report.Passed},
		{"delivery scenario, receiver off", PlanOptions{APIKey: wire.TestPrefix + "k", Profile: wire.ProfileSandbox, WebhookListen: "off"}, RunEnv{Seeded: true, NoReceiver: "it is off"}, []string{"@sandbox", "@delivery"}, "receiver", report.Disabled},
		{"delivery scenario, receiver unreachable", PlanOptions{APIKey: wire.TestPrefix + "k", Profile: wire.ProfileSandbox}, RunEnv{Seeded: true, NoReceiver: "it listens on loopback"}, []string{"@sandbox", "@delivery"}, "loopback", report.Skipped},
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
		if kept := matchTags(strings.Join(ExclusionTags(tt.cfg, tt.env), " && "), tt.tags); kept != (got == "") {
			t.Errorf("%s: exclusion tags keep=%v, but skip reason %q", tt.name, kept, got)
		}
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
		if err := ValidateTags(tt.expr); (err == nil) != tt.ok {
			t.Errorf("validateTags(%q) = %v, want ok=%v", tt.expr, err, tt.ok)
		}
	}
}

// TestLoadErrorsKeepTheirCause: a feature directory that cannot be read
// is a usage error that still says, to errors.Is, what went wrong.
func TestLoadErrorsKeepTheirCause(t *testing.T) {
	_, err := LoadFeatures(PlanOptions{NoBuiltin: true, FeatureDirs: []string{filepath.Join(t.TempDir(), "missing")}})
	if !errors.Is(err, wire.ErrUsage) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadFeatures of a missing directory: %v; want a usage error wrapping fs.ErrNotExist", err)
	}
}
