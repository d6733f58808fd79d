package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// OpenAPIServed, as Config.OpenAPI, is the document the deployment itself
// serves at /openapi.json, as the sandbox does.
const OpenAPIServed = "served"

// SchemaViolation is one way an exchange or a delivery breaks the OpenAPI
// document: where (In: "request", "response", "route"…), at which JSON path
// or name (Path), what the document wants there, and what was wrong.
type SchemaViolation struct {
	In, Path, Want, Message string
}

// Schema checks exchanges and webhook deliveries against one OpenAPI
// document. It must be safe for concurrent use.
type Schema interface {
	Check(req *http.Request, reqBody []byte, res *http.Response, resBody []byte) []SchemaViolation
	CheckWebhook(eventType string, req *http.Request, body []byte) []SchemaViolation
}

// SchemaLoader reads an OpenAPI 3 document (YAML or JSON) for --openapi,
// refusing one that is not valid OpenAPI 3. The validator lives outside this
// package (conformance/openapicheck) because it costs more to build than
// the rest of the kit; a build without it leaves Config.LoadSchema nil.
type SchemaLoader func(doc []byte) (Schema, error)

// schemaRule is how a report names a break of the OpenAPI document.
const schemaRule = "every exchange matches the OpenAPI document"

// loadSchema returns the validator of the document cfg.OpenAPI names: a file,
// an http(s) URL, or OpenAPIServed. A document that cannot be read, or that
// is not valid OpenAPI 3, is a usage error: the run would judge the
// deployment by a broken yardstick.
func loadSchema(ctx context.Context, cfg Config, client *http.Client) (Schema, error) {
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
	v, err := cfg.LoadSchema(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: --openapi %s: %v", ErrUsage, source, err)
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
func schemaViolation(found []SchemaViolation, request string) (ruleViolation, bool) {
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
