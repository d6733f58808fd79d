package wire

import (
	"strings"

	"github.com/testcampaign/kit/conformance/kit"
)

// IsLiveKey reports whether key acts on real data and billing (spec §5).
func IsLiveKey(key string) bool { return strings.HasPrefix(key, kit.LivePrefix) }
