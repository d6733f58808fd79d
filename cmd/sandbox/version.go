package main

import (
	"fmt"
	"io"

	"github.com/testcampaign/kit/internal/version"
)

// subcommand runs the modes that do not serve: --version and healthcheck.
// It reports whether args asked for one of them, and the exit status.
func subcommand(args []string, stdout, stderr io.Writer) (code int, ran bool) {
	switch {
	case len(args) == 0:
		return 0, false
	case version.IsFlag(args[0]):
		fmt.Fprintln(stdout, "sandbox", version.Read())
		return 0, true
	case args[0] == "healthcheck":
		return healthcheck(args[1:], stderr), true
	}
	return 0, false
}
