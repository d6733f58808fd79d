package wire

import (
	"strings"

	"github.com/testcampaign/kit/docs"
)

// Profiles choose which levels run. The spec profile holds any deployment to
// the published spec (@must, @should); the sandbox profile adds the sandbox's
// documented choices (@sandbox), which a live deployment need not share.
const (
	ProfileSpec    = "spec"
	ProfileSandbox = "sandbox"
)

// IsLiveKey reports whether key acts on real data and billing (spec §5).
func IsLiveKey(key string) bool { return strings.HasPrefix(key, LivePrefix) }

// Levels of the rules of docs/contract.md and of the scenarios' tags: the
// words in which the judging packages say how much a break weighs, and
// the reports rank it. The docs package, which reads the contract, is
// where they are spelled.
const (
	LevelMust    = docs.Must
	LevelShould  = docs.Should
	LevelSandbox = docs.Sandbox
)

// AreaSchema is the report's area of the exchanges that break the OpenAPI
// document of --openapi, whatever scenario made them.
const AreaSchema = "schema"
