package runner

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/kit"
)

// loadSchema returns the validator of the document cfg.OpenAPI names: a file,
// an http(s) URL, or kit.OpenAPIServed. A document that cannot be read, or that
// is not valid OpenAPI 3, is a usage error: the run would judge the
// deployment by a broken yardstick.
func loadSchema(ctx context.Context, cfg kit.Config, t *transport.Target) (kit.Schema, error) {
	source := cfg.OpenAPI
	if source == kit.OpenAPIServed {
		source = strings.TrimRight(cfg.BaseURL, "/") + "/openapi.json"
	}
	var (
		doc []byte
		err error
	)
	if strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://") {
		doc, err = t.FetchDocument(ctx, source)
	} else {
		doc, err = os.ReadFile(source)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: --openapi %s: %w", kit.ErrUsage, source, err)
	}
	v, err := cfg.LoadSchema(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: --openapi %s: %w", kit.ErrUsage, source, err)
	}
	return v, nil
}
