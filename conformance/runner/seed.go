package runner

import (
	"context"
	"io"
	"net/http"

	"github.com/testcampaign/kit/conformance/model"
	"github.com/testcampaign/kit/conformance/transport"
	"github.com/testcampaign/kit/conformance/wire"
)

// startModel builds the run's model. In the sandbox profile it first reads
// what a fresh account holds, so that owned accounts are held exactly.
func startModel(ctx context.Context, cfg Config, t *transport.Target) *model.Model {
	m := model.NewModel(cfg.Profile, cfg.Contract)
	if cfg.Profile == wire.ProfileSandbox {
		key := wire.TestPrefix + "conform_seed_" + wire.RandomToken()
		m.Seed = model.ReadSeed(ctx, func(ctx context.Context, path string) (int, []byte, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.BaseURL+path, nil)
			if err != nil {
				return 0, nil, err
			}
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := t.Client.Do(req)
			if err != nil {
				return 0, nil, err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(io.LimitReader(resp.Body, wire.MaxBody))
			return resp.StatusCode, b, err
		})
	}
	if cfg.ExclusiveKey {
		m.Own(cfg.APIKey, false)
	}
	return m
}
