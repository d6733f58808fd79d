package rules

import (
	"fmt"

	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/docs"
)

// schemaRule is how a report names a break of the OpenAPI document.
const schemaRule = "every exchange matches the OpenAPI document"

// schemaViolation turns the first of a check's violations into the
// scenario's rule break, naming how many more there were.
func FromSchema(found []kit.SchemaViolation, request string) (RuleViolation, bool) {
	if len(found) == 0 {
		return RuleViolation{}, false
	}
	v := found[0]
	msg := fmt.Sprintf("%s %s: %s (the document wants %s)", v.In, v.Path, v.Message, v.Want)
	if len(found) > 1 {
		msg += fmt.Sprintf(", and %d more", len(found)-1)
	}
	return RuleViolation{Rule: schemaRule, Level: docs.Must, Area: kit.AreaSchema, Message: msg, Request: request}, true
}
