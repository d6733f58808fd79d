package rules

import (
	"fmt"
	"net/http"

	"github.com/testcampaign/kit/conformance/internal/wire"
)

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

// schemaViolation turns the first of a check's violations into the
// scenario's rule break, naming how many more there were.
func FromSchema(found []SchemaViolation, request string) (RuleViolation, bool) {
	if len(found) == 0 {
		return RuleViolation{}, false
	}
	v := found[0]
	msg := fmt.Sprintf("%s %s: %s (the document wants %s)", v.In, v.Path, v.Message, v.Want)
	if len(found) > 1 {
		msg += fmt.Sprintf(", and %d more", len(found)-1)
	}
	return RuleViolation{Rule: schemaRule, Level: wire.LevelMust, Area: wire.AreaSchema, Message: msg, Request: request}, true
}
