package main

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/internal/version"
)

func TestVersion(t *testing.T) {
	want := "conform " + version.Read().String() + "\n"
	for _, arg := range []string{"--version", "-version"} {
		t.Run(arg, func(t *testing.T) {
			var stdout bytes.Buffer
			// No key and no base URL: asking for the version needs neither.
			code := run(context.Background(), []string{arg}, func(string) string { return "" }, &stdout, io.Discard)
			if code != kit.ExitConformant || stdout.String() != want {
				t.Errorf("conform %s = %d, %q; want %d, %q", arg, code, stdout.String(), kit.ExitConformant, want)
			}
		})
	}
}
