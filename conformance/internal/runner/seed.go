package runner

import (
	"context"
	"net/http"

	"github.com/testcampaign/kit/conformance/internal/model"
	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// startModel builds the run's model. In the sandbox profile it first reads
// what a fresh account holds, so that owned accounts are held exactly.
func startModel(ctx context.Context, cfg kit.Config, t *transport.Target) *model.Model {
	var (
		seed *model.Seed
		gap  string
	)
	if cfg.Profile == kit.ProfileSandbox {
		key := kit.TestPrefix + "conform_seed_" + wire.RandomToken()
		var err error
		seed, err = model.ReadSeed(ctx, func(ctx context.Context, path string) (int, []byte, error) {
			ex, err := t.Send(ctx, transport.Request{Method: http.MethodGet, Path: path, Key: key})
			if err != nil {
				return 0, nil, err
			}
			return ex.Status, ex.Body, nil
		})
		if err != nil {
			gap = "the records, IDs and counts of fresh accounts: what a fresh account holds could not be read (" + t.Redact(err.Error()) + "), so the model learns them instead of holding them exactly"
		}
	}
	m := model.New(cfg.Profile, cfg.Contract, seed)
	if gap != "" {
		m.Gap(gap)
	}
	if cfg.ExclusiveKey {
		m.Own(cfg.APIKey, false)
	}
	return m
}
