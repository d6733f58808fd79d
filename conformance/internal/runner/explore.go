package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/testcampaign/kit/conformance/internal/coverage"

	"github.com/testcampaign/kit/conformance/internal/explore"
	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// Explore runs only the explorer, for cfg.Explore (the bounded exploration
// of a run when zero): the long soak of `conform explore`. It needs the
// sandbox's fresh accounts, so it never writes with a live key. Its report
// goes wherever a run's would: the summary, --format junit or cucumber on
// Output, and cfg.Reports, from every outcome.
func Explore(ctx context.Context, cfg kit.Config) (*kit.Report, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return Refuse(cfg, err)
	}
	if cfg.Profile != kit.ProfileSandbox {
		return Refuse(cfg, fmt.Errorf("%w: the explorer needs fresh accounts: run it with --profile sandbox", kit.ErrUsage))
	}
	start := time.Now()
	tgt := &transport.Target{BaseURL: strings.TrimRight(cfg.BaseURL, "/"), Key: cfg.APIKey, Profile: cfg.Profile, Redact: wire.Redactor(cfg.APIKey), Coverage: coverage.NewRecorder(true, catalogue())}
	tgt.Client = transport.NewClient(2*cfg.Concurrency, cfg.Timeout)
	if err := preflight(ctx, tgt); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w before the first request", kit.ErrInterrupted)
		}
		rep := stoppedReport(cfg, start, err)
		return rep, errors.Join(err, writeReports(cfg, rep))
	}
	tgt.Model = startModel(ctx, cfg, tgt)
	tgt.Model.Coverage = tgt.Coverage
	res := explore.StartExploring(ctx, exploreOptions(cfg), tgt).Wait()
	rep := newReport(cfg, start, time.Since(start))
	rep.Settings.ExplorerOnly = true
	rep.Scenarios = res
	rep.Coverage = tgt.Coverage.Outcomes()
	rep.Unchecked = tgt.Model.Gaps()
	if ctx.Err() != nil {
		rep.Stopped = kit.ErrInterrupted.Error()
		err = fmt.Errorf("%w: the exploration stopped after %s", kit.ErrInterrupted, rep.Duration.Round(time.Millisecond))
	}
	return rep, errors.Join(err, writeReports(cfg, rep))
}
