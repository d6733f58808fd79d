package version

import (
	"encoding/json"
	"os"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
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
		linkRevision string
		want         Info
	}{
		{
			name: "built in a checkout: the kit's version, whatever the module's",
			bi:   stamped,
			want: Info{Version: Version, Revision: rev, Time: "2026-11-23T04:15:49Z", Modified: true, GoVersion: "go1.26.8"},
		},
		{
			name: "the toolchain's record wins over the link-time revision",
			bi:   stamped, linkRevision: "stale",
			want: Info{Version: Version, Revision: rev, Time: "2026-11-23T04:15:49Z", Modified: true, GoVersion: "go1.26.8"},
		},
		{
			name: "container build without .git, revision passed at link time",
			bi:   unstamped, linkRevision: rev,
			want: Info{Version: Version, Revision: rev, GoVersion: "go1.24.6"},
		},
		{
			name: "go run: no revision recorded",
			bi:   unstamped,
			want: Info{Version: Version, Revision: Unknown, GoVersion: "go1.24.6"},
		},
		{
			name: "no build information at all",
			want: Info{Version: Version, Revision: Unknown},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fromBuildInfo(tt.bi, tt.linkRevision)
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
			name:       "a checkout with changes",
			info:       Info{Version: "0.5.0-dev", Revision: rev, Time: "2026-11-23T04:15:49Z", Modified: true, GoVersion: "go1.26.8"},
			wantString: "0.5.0-dev (revision " + rev + ", 2026-11-23T04:15:49Z, modified, go1.26.8)",
			wantShort:  "0.5.0-dev (18dbf26abcde)",
		},
		{
			name:       "a release",
			info:       Info{Version: "0.5.0", Revision: rev, GoVersion: "go1.24.6"},
			wantString: "0.5.0 (revision " + rev + ", go1.24.6)",
			wantShort:  "0.5.0 (18dbf26abcde)",
		},
		{
			name:       "no revision known",
			info:       Info{Version: "0.5.0", Revision: Unknown},
			wantString: "0.5.0 (revision unknown)",
			wantShort:  "0.5.0",
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

// releaseHeading is a release's heading in CHANGELOG.md: ## [0.4.0] - 2026-11-27.
var releaseHeading = regexp.MustCompile(`(?m)^## \[(\d+)\.(\d+)\.(\d+)\] - \d{4}-\d{2}-\d{2}$`)

// The version the commands print is the one the changelog and the npm
// package name: the newest release's, or between releases a later one
// suffixed -dev, which the changelog says the commands print.
func TestVersionIsTheChangelogsAndThePackages(t *testing.T) {
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	newest := releaseHeading.FindSubmatch(changelog)
	if newest == nil {
		t.Fatal("CHANGELOG.md has no release heading such as ## [0.1.0] - 2026-11-22")
	}
	released := [3]int{}
	for i := range released {
		released[i], _ = strconv.Atoi(string(newest[i+1]))
	}
	base, dev := strings.CutSuffix(Version, "-dev")
	var parts [3]int
	fields := strings.Split(base, ".")
	if len(fields) != 3 {
		t.Fatalf("Version %q is not MAJOR.MINOR.PATCH, with -dev between releases", Version)
	}
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("Version %q is not MAJOR.MINOR.PATCH, with -dev between releases", Version)
		}
		parts[i] = n
	}
	switch {
	case dev && !newer(parts, released):
		t.Errorf("Version %s is not past the newest release in CHANGELOG.md, %s", Version, newest[0])
	case dev && !strings.Contains(string(changelog), "`"+Version+"`"):
		t.Errorf("CHANGELOG.md does not say that the commands print %s between releases", Version)
	case !dev && parts != released:
		t.Errorf("Version %s is not the newest release in CHANGELOG.md, %s", Version, newest[0])
	}

	raw, err := os.ReadFile("../../sdk-ts/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Version != Version {
		t.Errorf("sdk-ts/package.json has version %q, want the kit's %q", pkg.Version, Version)
	}
}

// newer says whether version a comes after b.
func newer(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return false
}
