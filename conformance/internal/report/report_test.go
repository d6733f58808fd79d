package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/testcampaign/kit/conformance/internal/wire"
)

func TestReportsNameTheBuildThatWroteThem(t *testing.T) {
	for _, tt := range []struct{ version, want string }{
		{"v1.2.0 (18dbf26abcde)", "conform v1.2.0 (18dbf26abcde)"},
		{"", "conform"},
	} {
		rep := &Report{Version: tt.version, BaseURL: "http://127.0.0.1:8080", Settings: Settings{Profile: wire.ProfileSandbox},
			Scenarios: []ScenarioResult{{URI: "features/auth.feature", Line: 3, Name: "n", Area: "auth", Level: wire.LevelMust, Status: Passed}}}
		var junit, summary bytes.Buffer
		if err := rep.WriteJUnit(&junit); err != nil {
			t.Fatal(err)
		}
		rep.WriteSummary(&summary)
		if !strings.Contains(junit.String(), `name="`+tt.want+`"`) {
			t.Errorf("junit for version %q does not name %q:\n%s", tt.version, tt.want, junit.String())
		}
		if first := strings.SplitN(strings.TrimLeft(summary.String(), "\n"), "\n", 2)[0]; !strings.HasPrefix(first, tt.want+" ") {
			t.Errorf("summary for version %q starts %q, want %q", tt.version, first, tt.want)
		}
	}
}
