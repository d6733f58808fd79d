package runner

import (
	"context"
	"fmt"
	"github.com/testcampaign/kit/conformance/coverage"
	"strings"
	"time"

	"github.com/testcampaign/kit/conformance/explore"
	"github.com/testcampaign/kit/conformance/report"
	"github.com/testcampaign/kit/conformance/transport"
	"github.com/testcampaign/kit/conformance/wire"
)

// Explore runs only the explorer, for cfg.Explore (the bounded exploration
// of a run when zero): the long soak of `conform explore`. It needs the sandbox's fresh accounts, so
// it never writes with a live key.
func Explore(ctx context.Context, cfg Config) (*report.Report, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Profile != wire.ProfileSandbox {
		return nil, fmt.Errorf("%w: the explorer needs fresh accounts: run it with --profile sandbox", wire.ErrUsage)
	}
	tgt := &transport.Target{BaseURL: strings.TrimRight(cfg.BaseURL, "/"), Key: cfg.APIKey, Profile: cfg.Profile, Redact: wire.Redactor(cfg.APIKey), Coverage: coverage.NewRecorder(true)}
	tgt.Client = newClient(cfg, tgt)
	if err := preflight(ctx, tgt); err != nil {
		return nil, err
	}
	tgt.Model = startModel(ctx, cfg, tgt)
	tgt.Model.Coverage = tgt.Coverage
	start := time.Now()
	res := explore.StartExploring(ctx, cfg.exploreOptions(), tgt).Wait()
	rep := newReport(cfg, start, time.Since(start))
	rep.Scenarios = res
	rep.Coverage = tgt.Coverage.Outcomes()
	if cfg.Summary != nil {
		w := wire.NewRedactingWriter(cfg.Summary, cfg.APIKey)
		rep.WriteSummary(w)
		if err := w.Flush(); err != nil {
			return nil, fmt.Errorf("writing the summary: %w", err)
		}
	}
	return rep, nil
}
