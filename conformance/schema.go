package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/testcampaign/kit/openapi"
)

// OpenAPIServed, as Config.OpenAPI, is the document the deployment itself
// serves at /openapi.json, as the sandbox does.
const OpenAPIServed = "served"

// schemaRule is how a report names a break of the OpenAPI document.
const schemaRule = "every exchange matches the OpenAPI document"

// loadSchema returns the validator of the document cfg.OpenAPI names: a file,
// an http(s) URL, or OpenAPIServed. A document that cannot be read, or that
// is not valid OpenAPI 3, is a usage error: the run would judge the
// deployment by a broken yardstick.
func loadSchema(ctx context.Context, cfg Config, client *http.Client) (*openapi.Validator, error) {
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
		return nil, fmt.Errorf("%w: --openapi %s: %v", ErrUsage, source, err)
	}
	v, err := openapi.Load(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: --openapi %s: %v", ErrUsage, source, err)
	}
	if broken := v.Validate(); len(broken) > 0 {
		msgs := make([]string, 0, 3)
		for _, b := range broken[:min(3, len(broken))] {
			msgs = append(msgs, fmt.Sprintf("%s: %s", b.Path, b.Message))
		}
		return nil, fmt.Errorf("%w: --openapi %s is not a valid OpenAPI 3 document (%d problems): %s",
			ErrUsage, source, len(broken), strings.Join(msgs, "; "))
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
	return io.ReadAll(io.LimitReader(res.Body, maxBody))
}

// schemaViolation turns the first of a check's violations into the
// scenario's rule break, naming how many more there were.
func schemaViolation(found []openapi.Violation, request string) (ruleViolation, bool) {
	if len(found) == 0 {
		return ruleViolation{}, false
	}
	v := found[0]
	msg := fmt.Sprintf("%s %s: %s (the document wants %s)", v.In, v.Path, v.Message, v.Want)
	if len(found) > 1 {
		msg += fmt.Sprintf(", and %d more", len(found)-1)
	}
	return ruleViolation{rule: schemaRule, level: LevelMust, area: areaSchema, message: msg, request: request}, true
}
