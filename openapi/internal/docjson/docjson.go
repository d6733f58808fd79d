// Package docjson turns the YAML OpenAPI document into its JSON form.
package docjson

import (
	"fmt"

	"github.com/pb33f/libopenapi"
)

// FromYAML renders an OpenAPI 3 document as indented JSON, in the order it is
// written.
func FromYAML(doc []byte) ([]byte, error) {
	parsed, err := libopenapi.NewDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("parse OpenAPI document: %w", err)
	}
	model, err := parsed.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("model OpenAPI document: %w", err)
	}
	out, err := model.Model.RenderJSON("  ")
	if err != nil {
		return nil, fmt.Errorf("render OpenAPI document as JSON: %w", err)
	}
	return append(out, '\n'), nil
}
