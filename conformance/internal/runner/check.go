package runner

import (
	"fmt"

	"github.com/testcampaign/kit/conformance/internal/plan"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

// Check validates feature files without sending a request: every step must
// match exactly one step of the library, and every {placeholder} and
// "<placeholder>" must be known where it is used. It returns one line per
// problem, each naming the file and line.
func Check(cfg Config) ([]string, error) {
	if cfg.NoBuiltin && len(cfg.FeatureDirs) == 0 {
		return nil, fmt.Errorf("%w: nothing to check", wire.ErrUsage)
	}
	files, err := plan.LoadFeatures(cfg.planOptions())
	if err != nil {
		return nil, err
	}
	return append(plan.Lint(files), plan.UnmatchedLines(files)...), nil
}
