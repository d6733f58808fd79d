// Package version says which build of the kit's commands is running: the
// kit's version, and the commit the Go toolchain records in every binary it
// builds.
package version

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Version is the kit's version, as CHANGELOG.md names its releases: a
// release's number, or between releases the next one suffixed "-dev". The
// TypeScript package in sdk-ts carries the same.
const Version = "0.5.0-dev"

// A build that cannot see the repository's history, such as a container
// build whose context leaves out .git, sets the revision at link time:
//
//	-ldflags "-X github.com/testcampaign/kit/internal/version.revision=<commit>"
//
// What the toolchain recorded itself always wins, so a stale value passed by
// hand cannot hide the real one.
var revision string

// Unknown stands for a revision that no one recorded.
const Unknown = "unknown"

// Info identifies one build.
type Info struct {
	// Version is the kit's Version.
	Version string
	// Revision is the full commit hash, or Unknown.
	Revision string
	// Time is the commit's time (RFC 3339), empty when unknown.
	Time string
	// Modified reports uncommitted changes in the built tree.
	Modified bool
	// GoVersion is the toolchain that built the binary, e.g. "go1.26.8".
	GoVersion string
}

// Read returns the running binary's build information.
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(bi, revision)
}

// IsFlag reports whether a command-line argument asks for the version, as
// -version or --version.
func IsFlag(arg string) bool { return arg == "-version" || arg == "--version" }

// fromBuildInfo prefers the toolchain's record of the revision (bi may be
// nil) and falls back on the link-time value.
func fromBuildInfo(bi *debug.BuildInfo, linkRevision string) Info {
	info := Info{Version: Version, Revision: linkRevision}
	if bi != nil {
		info.GoVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.time":
				info.Time = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if info.Revision == "" {
		info.Revision = Unknown
	}
	return info
}

// String is one line for --version output:
//
//	0.5.0-dev (revision 18dbf26abcde…, 2026-11-23T04:15:49Z, modified, go1.26.8)
func (i Info) String() string {
	details := []string{"revision " + i.Revision}
	if i.Time != "" {
		details = append(details, i.Time)
	}
	if i.Modified {
		details = append(details, "modified")
	}
	if i.GoVersion != "" {
		details = append(details, i.GoVersion)
	}
	return fmt.Sprintf("%s (%s)", i.Version, strings.Join(details, ", "))
}

// Short names the build in a few characters, for reports that name the tool
// that wrote them: the version, and the first 12 hex digits of the revision
// when it is known.
func (i Info) Short() string {
	if i.Revision == Unknown {
		return i.Version
	}
	return fmt.Sprintf("%s (%s)", i.Version, i.Revision[:min(12, len(i.Revision))])
}
