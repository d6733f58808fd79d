// Package openapicheck gives conform its OpenAPI validator, for --openapi
// (kit.Config.LoadSchema). It is the one package of the kit besides
// the facade and conformancetest that code outside conformance/ may import,
// and it speaks only the facade's types: the validator (libopenapi-validator
// and what it needs) takes longer to compile than the rest of the kit, so it
// stays out of the facade, and cmd/conform links it only when built with
// -tags openapi.
package openapicheck

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/openapi"
)

// Load is a kit.SchemaLoader: it parses an OpenAPI 3 document and
// refuses one that is not valid OpenAPI 3, naming its first problems.
func Load(doc []byte) (kit.Schema, error) {
	v, err := openapi.Load(doc)
	if err != nil {
		return nil, err
	}
	if broken := v.Validate(); len(broken) > 0 {
		msgs := make([]string, 0, 3)
		for _, b := range broken[:min(3, len(broken))] {
			msgs = append(msgs, fmt.Sprintf("%s: %s", b.Path, b.Message))
		}
		return nil, fmt.Errorf("not a valid OpenAPI 3 document (%d problems): %s", len(broken), strings.Join(msgs, "; "))
	}
	return schema{v}, nil
}

type schema struct{ v *openapi.Validator }

func (s schema) Check(req *http.Request, reqBody []byte, res *http.Response, resBody []byte) []kit.SchemaViolation {
	return convert(s.v.Check(req, reqBody, res, resBody))
}

func (s schema) CheckWebhook(eventType string, req *http.Request, body []byte) []kit.SchemaViolation {
	return convert(s.v.CheckWebhook(eventType, req, body))
}

func convert(found []openapi.Violation) []kit.SchemaViolation {
	out := make([]kit.SchemaViolation, len(found))
	for i, v := range found {
		out[i] = kit.SchemaViolation{In: v.In, Path: v.Path, Want: v.Want, Message: v.Message}
	}
	return out
}
