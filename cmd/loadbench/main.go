// Command loadbench measures the real sandbox binary, built for the run,
// over loopback. Each measurement is a subcommand:
//
//	loadbench throughput [flags]      # wrk against the sandbox and a bare net/http server replaying its bytes
//	loadbench memory [flags]          # RSS: 200,000 creates, 20,000 fresh keys
//	loadbench soak [flags]            # RSS, goroutines and accounts over a long mixed run
//	loadbench attack [flags] NAME...  # attacks of a hostile tenant, each against its bar; all runs them all
//	loadbench instructions [flags]    # cachegrind's instructions and the allocations per request, the sandbox against the bare server
//	loadbench serve [flags]           # the sandbox and the bare server, for wrk or a profiler by hand
//
// It only ever talks to 127.0.0.1, and every run is bounded by its flags.
// loadbench tenant is what the bodies attack re-executes it as, and
// loadbench replay what instructions runs the bare server as.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/testcampaign/kit/cmd/loadbench/internal/attack"
)

// command is one subcommand: its flags, and what it runs once they are
// parsed, with the arguments left.
type command struct {
	summary string
	flags   func(fset *flag.FlagSet) func(args []string, out io.Writer) error
}

var commands = map[string]command{
	"throughput":   {"requests per second and latency of the sandbox against the bare server, driven by wrk", throughputFlags},
	"memory":       {"the sandbox's RSS before and after many records and many accounts", memoryFlags},
	"soak":         {"a long run of fresh keys, webhooks and oversized inputs, sampling RSS, goroutines and accounts", soakFlags},
	"attack":       {"attacks of a hostile tenant, each against its bar: all, or some of " + strings.Join(attack.Names, ", "), attackFlags},
	"instructions": {"instructions and allocations per request of the sandbox against the bare server, counted by valgrind's cachegrind", instructionsFlags},
	"serve":        {"start the sandbox and the bare server, print their URLs, and serve until interrupted", serveFlags},
}

var order = []string{"throughput", "instructions", "memory", "soak", "attack", "serve"}

func usage(out io.Writer) {
	fmt.Fprintln(out, "usage: loadbench COMMAND [flags] [args]\n\ncommands:")
	for _, name := range order {
		fmt.Fprintf(out, "  %-11s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(out, "\nloadbench COMMAND -h lists a command's flags.")
}

func main() {
	err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, out, errOut io.Writer) error {
	if len(args) > 0 && args[0] == attack.TenantCommand {
		return attack.RunTenant(args[1:], stdin, out)
	}
	var cmd command
	if len(args) > 0 {
		cmd = commands[args[0]]
		if args[0] == replayCommand {
			cmd = command{flags: replayFlags}
		}
	}
	if cmd.flags == nil {
		usage(errOut)
		if len(args) > 0 && args[0] != "-h" && args[0] != "help" {
			return fmt.Errorf("unknown command %q", args[0])
		}
		return flag.ErrHelp
	}
	fset := flag.NewFlagSet("loadbench "+args[0], flag.ContinueOnError)
	fset.SetOutput(errOut)
	do := cmd.flags(fset)
	if err := fset.Parse(args[1:]); err != nil {
		return err
	}
	if err := do(fset.Args(), out); err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	return nil
}

// noArgs refuses arguments to a command that takes only flags.
func noArgs(args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q", args)
	}
	return nil
}

func attackFlags(fset *flag.FlagSet) func([]string, io.Writer) error {
	sizes := attack.Flags(fset)
	return func(args []string, out io.Writer) error {
		if len(args) == 0 {
			return errors.New("name an attack, or all: " + strings.Join(attack.Names, ", "))
		}
		return attack.Run(strings.Join(args, ","), sizes, out)
	}
}
