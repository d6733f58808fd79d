// Command tojson writes an OpenAPI document given in YAML as JSON, keeping
// the order of its keys, so that the served JSON reads like the YAML.
//
//	tojson openapi.yaml openapi.json
package main

import (
	"fmt"
	"os"

	"github.com/testcampaign/kit/openapi/internal/docjson"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: tojson IN.yaml OUT.json")
		os.Exit(2)
	}
	in, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := docjson.FromYAML(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[2], out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
