package runner

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"strings"

	"github.com/testcampaign/kit/conformance/internal/explore"
	"github.com/testcampaign/kit/conformance/internal/plan"
	"github.com/testcampaign/kit/conformance/kit"
)

// settings is the effective configuration a report records.
func settings(c kit.Config) kit.Settings {
	return kit.Settings{
		Tags: c.Tags, Profile: c.Profile, Strict: c.Strict, FailOnSkip: c.FailOnSkip,
		FeatureDirs: c.FeatureDirs, NoBuiltin: c.NoBuiltin, OpenAPI: c.OpenAPI,
		Concurrency: c.Concurrency, Exhaustive: c.Exhaustive, AllowWrites: c.AllowWrites,
		Seed: c.Seed,
	}
}

func planOptions(c kit.Config) plan.PlanOptions {
	return plan.PlanOptions{
		Tags: c.Tags, Profile: c.Profile, FeatureDirs: c.FeatureDirs, NoBuiltin: c.NoBuiltin,
		APIKey: c.APIKey, AllowWrites: c.AllowWrites, Exhaustive: c.Exhaustive, WebhookListen: c.WebhookListen,
	}
}

func exploreOptions(c kit.Config) explore.ExploreOptions {
	return explore.ExploreOptions{Duration: c.Explore, Seed: c.Seed, ReproDir: c.ReproDir, Sandbox: c.Profile == kit.ProfileSandbox}
}

// withDefaults returns c with zero values replaced and checks what the run
// cannot do without; its errors are usage errors.
func withDefaults(c kit.Config) (kit.Config, error) {
	if c.BaseURL == "" {
		return c, fmt.Errorf("%w: no base URL", kit.ErrUsage)
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("%w: base URL %q is not an absolute http(s) URL", kit.ErrUsage, c.BaseURL)
	}
	if p := strings.TrimRight(u.Path, "/"); strings.HasSuffix(p, "/v1") {
		// The features add /v1 themselves: every request would go to
		// /v1/v1/… and the whole run would blame a correct deployment.
		root := *u
		root.Path = strings.TrimSuffix(p, "/v1")
		return c, fmt.Errorf("%w: base URL %q ends in /v1, which every request adds itself; pass the deployment's root: --base-url %s", kit.ErrUsage, c.BaseURL, root.String())
	}
	if c.APIKey == "" {
		return c, fmt.Errorf("%w: no API key", kit.ErrUsage)
	}
	if c.Seed == 0 {
		// Picked here, not by the explorer, so that every report can
		// print the seed that repeats the run.
		c.Seed = rand.Uint64()
	}
	if c.Profile == "" {
		c.Profile = kit.ProfileSpec
	}
	if c.Profile != kit.ProfileSpec && c.Profile != kit.ProfileSandbox {
		return c, fmt.Errorf("%w: unknown profile %q (want %s or %s)", kit.ErrUsage, c.Profile, kit.ProfileSpec, kit.ProfileSandbox)
	}
	if c.Format == "" {
		c.Format = kit.FormatProgress
	}
	known := false
	for _, f := range kit.Formats() {
		known = known || f == c.Format
	}
	if !known {
		return c, fmt.Errorf("%w: unknown format %q (want one of %s)", kit.ErrUsage, c.Format, strings.Join(kit.Formats(), ", "))
	}
	for _, f := range c.Reports {
		if f.W == nil || (f.Format != kit.FormatJUnit && f.Format != kit.FormatCucumber && f.Format != kit.FormatHTML) {
			return c, fmt.Errorf("%w: the report %q is %q with writer %v; want %s, %s or %s, and a writer", kit.ErrUsage, f.Name, f.Format, f.W != nil, kit.FormatJUnit, kit.FormatCucumber, kit.FormatHTML)
		}
	}
	if c.Output == nil {
		c.Output = io.Discard
	}
	if c.Timeout <= 0 {
		c.Timeout = kit.DefaultTimeout
	}
	if c.RunTimeout <= 0 {
		c.RunTimeout = kit.DefaultRunTimeout + max(c.Explore, 0)
	}
	switch {
	case c.Concurrency < 0:
		return c, fmt.Errorf("%w: concurrency %d is negative", kit.ErrUsage, c.Concurrency)
	case c.Concurrency == 0 && c.Format == kit.FormatPretty:
		c.Concurrency = 1
	case c.Concurrency == 0:
		c.Concurrency = kit.DefaultConcurrency
	}
	if c.WebhookListen == "" {
		c.WebhookListen = "127.0.0.1:0"
	}
	if c.WebhookURL != "" {
		u, err := url.Parse(c.WebhookURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("%w: webhook URL %q is not an absolute http(s) URL", kit.ErrUsage, c.WebhookURL)
		}
	}
	if c.NoBuiltin && len(c.FeatureDirs) == 0 {
		return c, fmt.Errorf("%w: no built-in features and no feature directories: nothing to run", kit.ErrUsage)
	}
	if c.OpenAPI != "" && c.LoadSchema == nil {
		return c, fmt.Errorf("%w: --openapi: this build of conform has no OpenAPI validator; build it with `go build -tags openapi ./cmd/conform`", kit.ErrUsage)
	}
	return c, nil
}

// pastRunTimeout says why a run that reached its RunTimeout stopped.
func pastRunTimeout(c kit.Config) string {
	return fmt.Sprintf("the run did not finish within --run-timeout %s (a deployment answering too slowly?)", c.RunTimeout)
}
