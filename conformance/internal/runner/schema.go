package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

// OpenAPIServed, as Config.OpenAPI, is the document the deployment itself
// serves at /openapi.json, as the sandbox does.
const OpenAPIServed = "served"

// loadSchema returns the validator of the document cfg.OpenAPI names: a file,
// an http(s) URL, or OpenAPIServed. A document that cannot be read, or that
// is not valid OpenAPI 3, is a usage error: the run would judge the
// deployment by a broken yardstick.
func loadSchema(ctx context.Context, cfg Config, client *http.Client) (rules.Schema, error) {
	source := cfg.OpenAPI
	if source == OpenAPIServed {
		source = strings.TrimRight(cfg.BaseURL, "/") + "/openapi.json"
	}
	var (
		doc []byte
		err error
	)
	if strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://") {
		doc, err = fetchDocument(ctx, client, source)
	} else {
		doc, err = os.ReadFile(source)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: --openapi %s: %w", wire.ErrUsage, source, err)
	}
	v, err := cfg.LoadSchema(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: --openapi %s: %w", wire.ErrUsage, source, err)
	}
	return v, nil
}

// fetchDocument GETs a document without the key: it is public, and a key
// must not travel to an address the operator may not control.
func fetchDocument(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, errors.New(res.Status)
	}
	return io.ReadAll(io.LimitReader(res.Body, wire.MaxBody))
}
