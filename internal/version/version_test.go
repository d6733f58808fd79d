package version

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromBuildInfo(t *testing.T) {
	const rev = "18dbf26abcde0123456789abcdef0123456789ab"
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/testcampaign/kit", Version: "v0.0.0-20261123041549-18dbf26abcde+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "CGO_ENABLED", Value: "0"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-11-23T04:15:49Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	unstamped := &debug.BuildInfo{GoVersion: "go1.24.6", Main: debug.Module{Path: "github.com/testcampaign/kit", Version: "(devel)"}}
	tests := []struct {
		name         string
		bi           *debug.BuildInfo
		linkVersion  string
		linkRevision string
		want         Info
	}{
		{
			name: "built in a checkout",
			bi:   stamped,
			want: Info{Version: "v0.0.0-20261123041549-18dbf26abcde+dirty", Revision: rev, Time: "2026-11-23T04:15:49Z", Modified: true, GoVersion: "go1.26.8"},
		},
		{
			name: "the toolchain's record wins over link-time values",
			bi:   stamped, linkVersion: "v9.9.9", linkRevision: "stale",
			want: Info{Version: "v0.0.0-20261123041549-18dbf26abcde+dirty", Revision: rev, Time: "2026-11-23T04:15:49Z", Modified: true, GoVersion: "go1.26.8"},
		},
		{
			name: "container build without .git, revision passed at link time",
			bi:   unstamped, linkVersion: "v1.2.0", linkRevision: rev,
			want: Info{Version: "v1.2.0", Revision: rev, GoVersion: "go1.24.6"},
		},
		{
			name: "go run: nothing recorded",
			bi:   unstamped,
			want: Info{Version: "(devel)", Revision: Unknown, GoVersion: "go1.24.6"},
		},
		{
			name: "no build information at all",
			want: Info{Version: "(devel)", Revision: Unknown},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fromBuildInfo(tt.bi, tt.linkVersion, tt.linkRevision)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fromBuildInfo (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInfoText(t *testing.T) {
	const rev = "18dbf26abcde0123456789abcdef0123456789ab"
	tests := []struct {
		name       string
		info       Info
		wantString string
		wantShort  string
	}{
		{
			name:       "pseudo-version already names the commit",
			info:       Info{Version: "v0.0.0-20261123041549-18dbf26abcde+dirty", Revision: rev, Time: "2026-11-23T04:15:49Z", Modified: true, GoVersion: "go1.26.8"},
			wantString: "v0.0.0-20261123041549-18dbf26abcde+dirty (revision " + rev + ", 2026-11-23T04:15:49Z, modified, go1.26.8)",
			wantShort:  "v0.0.0-20261123041549-18dbf26abcde+dirty",
		},
		{
			name:       "release tag",
			info:       Info{Version: "v1.2.0", Revision: rev, GoVersion: "go1.24.6"},
			wantString: "v1.2.0 (revision " + rev + ", go1.24.6)",
			wantShort:  "v1.2.0 (18dbf26abcde)",
		},
		{
			name:       "nothing known",
			info:       Info{Version: "(devel)", Revision: Unknown},
			wantString: "(devel) (revision unknown)",
			wantShort:  "(devel)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.info.String(); got != tt.wantString {
				t.Errorf("String() = %q, want %q", got, tt.wantString)
			}
			if got := tt.info.Short(); got != tt.wantShort {
				t.Errorf("Short() = %q, want %q", got, tt.wantShort)
			}
		})
	}
}

func TestIsFlag(t *testing.T) {
	for arg, want := range map[string]bool{"-version": true, "--version": true, "version": false, "-v": false, "--versions": false} {
		if got := IsFlag(arg); got != want {
			t.Errorf("IsFlag(%q) = %v, want %v", arg, got, want)
		}
	}
}
