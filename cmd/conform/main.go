// Command conform checks a deployment of the Test-Campaign API v1, live or
// sandbox, against the published spec and says where it deviates.
//
//	SVC_API_KEY=svc_test_… conform --base-url http://127.0.0.1:8080 --profile sandbox
//	conform steps
//
// The key is read only from the environment variable SVC_API_KEY, never from
// a flag (flags end up in shell history and CI logs), and is shown only as
// its prefix and last four characters. Exit status: 0 conformant, 1
// deviations found, 2 usage or connection error, or interrupted (SIGINT,
// SIGTERM), after writing the reports of what finished.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/internal/version"
)

// keyEnv is the only place the key is read from.
const keyEnv = "SVC_API_KEY"

func main() {
	ctx, stop := interruptible(context.Background())
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// interruptible ends ctx at the first SIGINT (Ctrl-C) or SIGTERM (a CI
// job cancelled), so that the run stops and writes what finished. The
// signals go back to their default then: a second one ends the process at
// once.
func interruptible(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// dirList collects a repeatable flag.
type dirList []string

func (d *dirList) String() string { return strings.Join(*d, ",") }

func (d *dirList) Set(v string) error {
	*d = append(*d, v)
	return nil
}

// openAPISource is --openapi: alone, the deployment's own /openapi.json;
// --openapi=FILE or --openapi=URL, that document.
type openAPISource string

func (o *openAPISource) String() string { return string(*o) }

func (o *openAPISource) Set(v string) error {
	if v == "true" {
		v = kit.OpenAPIServed
	}
	*o = openAPISource(v)
	return nil
}

// IsBoolFlag lets --openapi stand alone, as a switch.
func (o *openAPISource) IsBoolFlag() bool { return true }

// command is one subcommand of conform: how it runs with the arguments
// after its name. Without one, conform runs the suite.
type command func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int

var commands = map[string]command{
	"check": func(_ context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) int {
		return check(args, stdout, stderr)
	},
	"explore": func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
		return runSuite(ctx, args, getenv, stdout, stderr, true)
	},
	"steps": func(_ context.Context, _ []string, _ func(string) string, stdout, _ io.Writer) int {
		printSteps(stdout)
		return kit.ExitConformant
	},
	"rules": func(_ context.Context, _ []string, _ func(string) string, stdout, stderr io.Writer) int {
		if err := printRules(stdout); err != nil {
			fmt.Fprintln(stderr, "conform:", err)
			return kit.ExitError
		}
		return kit.ExitConformant
	},
}

// run is the whole command with its environment passed in, so that tests can
// drive it without a process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 && version.IsFlag(args[0]) {
		fmt.Fprintln(stdout, "conform", version.Read())
		return kit.ExitConformant
	}
	if len(args) > 0 {
		if c, ok := commands[args[0]]; ok {
			return c(ctx, args[1:], getenv, stdout, stderr)
		}
	}
	return runSuite(ctx, args, getenv, stdout, stderr, false)
}

// suiteOptions are the flags of a run of the suite.
type suiteOptions struct {
	cfg                   kit.Config
	output                string
	junit, cucumber, html string
	dirs                  dirList
	openAPI               openAPISource
	pending               *bool
}

// suiteFlags declares the flags of a run of the suite, for both the run and
// `conform explore`.
func suiteFlags(stderr io.Writer) (*flag.FlagSet, *suiteOptions) {
	fs := flag.NewFlagSet("conform", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &suiteOptions{}
	cfg := &o.cfg
	fs.StringVar(&cfg.BaseURL, "base-url", "", "root URL of the deployment, e.g. https://api.example.com (required)")
	fs.StringVar(&cfg.Profile, "profile", kit.ProfileSpec, "spec: @must and @should; sandbox: also the sandbox's own choices (@sandbox)")
	fs.StringVar(&cfg.Tags, "tags", "", `godog tag expression narrowing the run, e.g. "@auth,@envelope && ~@should"`)
	fs.StringVar(&cfg.Format, "format", kit.FormatProgress, "report format: "+strings.Join(kit.Formats(), ", "))
	fs.StringVar(&o.output, "output", "", "write the report to this file instead of standard output")
	fs.Var(&o.dirs, "features", "directory or .feature file of extra features, or file.feature:LINE for one scenario (repeatable)")
	fs.BoolVar(&cfg.NoBuiltin, "no-builtin", false, "run only the --features directories, not the built-in suite")
	fs.BoolVar(&cfg.Strict, "strict", false, "@should failures fail the run instead of warning")
	fs.DurationVar(&cfg.Timeout, "timeout", kit.DefaultTimeout, "timeout of each HTTP request")
	fs.DurationVar(&cfg.RunTimeout, "run-timeout", 0, fmt.Sprintf("deadline of the whole run, after which it stops as could not judge with the reports of what finished (default %s, plus --explore)", kit.DefaultRunTimeout))
	fs.IntVar(&cfg.Concurrency, "concurrency", 0, fmt.Sprintf("scenarios run at once (default 1 with --format pretty, else %d)", kit.DefaultConcurrency))
	fs.BoolVar(&cfg.AllowWrites, "allow-writes", false, "with a live key, also run @writes and @exhaustive scenarios (they change real data)")
	fs.BoolVar(&cfg.Exhaustive, "exhaustive", false, "run @exhaustive scenarios, which spend a whole rate-limit window")
	fs.BoolVar(&cfg.Color, "color", false, "colour godog's report")
	fs.StringVar(&o.junit, "junit", "", "also write a junit report of the run to this file")
	fs.StringVar(&o.cucumber, "cucumber", "", "also write a cucumber JSON report of the run to this file")
	fs.StringVar(&o.html, "html", "", "also write a self-contained HTML report of the run to this file")
	fs.BoolVar(&cfg.FailOnSkip, "fail-on-skip", false, "exit 1 when a selected scenario could not run (skipped), not only on deviations")
	fs.StringVar(&cfg.WebhookListen, "webhook-listen", "127.0.0.1:0", `address of conform's webhook receiver ("off" skips the @delivery scenarios)`)
	fs.StringVar(&cfg.WebhookURL, "webhook-url", "", "the receiver's URL as the deployment reaches it, if not the listening address")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "seed of the explorer's random requests, to reproduce a run (default: a random one, named in the report)")
	fs.DurationVar(&cfg.Explore, "explore", 0, "how long the explorer runs with --profile sandbox (default: a bounded exploration of a few seconds; negative: none)")
	fs.StringVar(&cfg.ReproDir, "repro-dir", "", "write each failure the explorer finds, and each scenario the model disagreed with, shrunk, as a .feature file in this directory")
	fs.BoolVar(&cfg.ExclusiveKey, "exclusive-key", false, "promise that nothing else uses the key during the run, so its rate limit and records are counted exactly")
	o.pending = fs.Bool("contract-pending", true, "hold the deployment to the newest rules of docs/contract.md (ERR-11, ERR-14): a duplicated JSON field is 400 INVALID_JSON, a number literal over 32 characters is VALIDATION_ERROR")
	fs.Var(&o.openAPI, "openapi", "also check every exchange and delivery against an OpenAPI 3 document: --openapi=FILE or --openapi=URL, or --openapi alone for the deployment's own /openapi.json")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage:\n  %s=<key> conform --base-url URL [flags]\n  %[1]s=<key> conform explore --base-url URL --profile sandbox [--explore 10m] [--seed N] [--repro-dir DIR]\n  conform check [--features DIR]... [--no-builtin] [--rules]\n  conform steps\n  conform rules\n\nFlags:\n", keyEnv)
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nThe API key is read from %s only. Exit status: 0 conformant, 1 deviations, 2 usage or connection error or interrupted.\n", keyEnv)
	}
	return fs, o
}

// runSuite runs the suite, or with exploreOnly only the explorer, against
// the deployment its flags name.
func runSuite(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, exploreOnly bool) int {
	fs, o := suiteFlags(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return kit.ExitConformant
		}
		return kit.ExitError
	}
	cfg := o.cfg
	cfg.Contract = kit.ContractSwitches{DuplicateFields: *o.pending, LongNumbers: *o.pending}
	cfg.OpenAPI, cfg.LoadSchema = string(o.openAPI), schemaLoader
	cfg.FeatureDirs = o.dirs
	cfg.Version = version.Read().Short()
	cfg.APIKey = strings.TrimSpace(getenv(keyEnv))
	cfg.Output, cfg.Summary = stdout, stderr
	// The report files are written on every exit 2, usage errors
	// included, so they are created before anything is refused.
	files, err := createReports(&cfg, o)
	var rep *kit.Report
	if err != nil {
		rep, err = conformance.Refuse(cfg, err)
	} else {
		rep, err = startRun(ctx, cfg, fs, o, exploreOnly)
	}
	if unwritten, cerr := files.close(); cerr != nil {
		// A report whose last write failed on close is not a report.
		err = errors.Join(err, cerr)
		if rep != nil {
			rep.Files = slices.DeleteFunc(rep.Files, func(name string) bool { return slices.Contains(unwritten, name) })
		}
	}
	if err != nil {
		return stopped(rep, err, cfg.APIKey, stderr)
	}
	return rep.ExitCode()
}

// startRun refuses a run its flags cannot start, and runs the others.
func startRun(ctx context.Context, cfg kit.Config, fs *flag.FlagSet, o *suiteOptions, exploreOnly bool) (*kit.Report, error) {
	if fs.NArg() > 0 {
		hint := ` (the commands are "check", "explore", "steps" and "rules")`
		if o.openAPI == kit.OpenAPIServed {
			hint = " (a document is given as --openapi=FILE)"
		}
		return conformance.Refuse(cfg, fmt.Errorf("%w: unexpected argument %q%s", kit.ErrUsage, fs.Arg(0), hint))
	}
	if cfg.APIKey == "" {
		return conformance.Refuse(cfg, fmt.Errorf("%w: set the API key in the environment variable %s", kit.ErrUsage, keyEnv))
	}
	if cfg.BaseURL == "" {
		return conformance.Refuse(cfg, fmt.Errorf("%w: --base-url is required", kit.ErrUsage))
	}
	if exploreOnly {
		if cfg.Explore == 0 {
			cfg.Explore = time.Minute
		}
		return conformance.Explore(ctx, cfg)
	}
	return conformance.Run(ctx, cfg)
}

// reportFiles are the files a run's reports go to.
type reportFiles []*os.File

// createReports creates the files of --output, --junit, --html and
// --cucumber and gives them to cfg. Every file it can create is kept, so
// that a refusal because of one that could not be is still written to
// the others.
func createReports(cfg *kit.Config, o *suiteOptions) (reportFiles, error) {
	var files reportFiles
	var errs []error
	// Two reports in one file would overwrite each other's bytes.
	named := map[string]string{}
	create := func(path, what string) *os.File {
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = filepath.Clean(path)
		}
		if first, ok := named[abs]; ok {
			errs = append(errs, fmt.Errorf("%w: %s and %s both name the file %s", kit.ErrUsage, first, what, path))
			return nil
		}
		named[abs] = what
		f, err := os.Create(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %w", kit.ErrUsage, what, err))
			return nil
		}
		files = append(files, f)
		return f
	}
	if o.output != "" {
		if f := create(o.output, "--output"); f != nil {
			cfg.Output, cfg.OutputName = f, o.output
		}
	}
	for _, r := range []struct{ path, what, format string }{
		{o.junit, "the junit report", kit.FormatJUnit},
		{o.html, "the HTML report", kit.FormatHTML},
		{o.cucumber, "the cucumber report", kit.FormatCucumber},
	} {
		if r.path == "" {
			continue
		}
		if f := create(r.path, r.what); f != nil {
			cfg.Reports = append(cfg.Reports, kit.ReportFile{Format: r.format, Name: r.path, W: f})
		}
	}
	return files, errors.Join(errs...)
}

// close closes the files, naming those that could not be and saying why.
func (files reportFiles) close() (unwritten []string, err error) {
	var errs []error
	for _, f := range files {
		if err := f.Close(); err != nil {
			unwritten = append(unwritten, f.Name())
			errs = append(errs, fmt.Errorf("closing the report %s: %w", f.Name(), err))
		}
	}
	return unwritten, errors.Join(errs...)
}

// stopped prints why a run ended with exit 2 and which reports say so.
func stopped(rep *kit.Report, err error, key string, stderr io.Writer) int {
	fmt.Fprintf(stderr, "conform: %s\n", redact(err.Error(), key))
	if rep != nil && len(rep.Files) > 0 {
		fmt.Fprintf(stderr, "conform: wrote %s\n", strings.Join(rep.Files, ", "))
	}
	return kit.ExitError
}

// check validates feature files without sending a request.
func check(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conform check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		dirs dirList
		cfg  kit.Config
	)
	fs.Var(&dirs, "features", "directory or .feature file to check (repeatable)")
	fs.BoolVar(&cfg.NoBuiltin, "no-builtin", false, "check only the --features directories")
	rules := fs.Bool("rules", false, "also say, for each feature file, which rules of docs/contract.md its scenarios cite by tag")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return kit.ExitConformant
		}
		return kit.ExitError
	}
	cfg.FeatureDirs = dirs
	if len(dirs) > 0 {
		cfg.NoBuiltin = true
	}
	problems, err := conformance.Check(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "conform check: %v\n", err)
		return kit.ExitError
	}
	for _, p := range problems {
		fmt.Fprintln(stderr, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(stderr, "conform check: %d problem(s)\n", len(problems))
		return kit.ExitError
	}
	if *rules {
		files, err := conformance.CitedRules(cfg)
		if err != nil {
			fmt.Fprintf(stderr, "conform check: %v\n", err)
			return kit.ExitError
		}
		printCited(stdout, files)
	}
	fmt.Fprintln(stdout, "conform check: the features are valid")
	return kit.ExitConformant
}

// printCited writes, file by file, the rules its scenarios cite by tag, and
// how many scenarios cite none: those count in a run's coverage only
// through what the model judges of their exchanges.
func printCited(w io.Writer, files []kit.CitedFile) {
	for _, f := range files {
		if f.Citing == 0 {
			fmt.Fprintf(w, "%s: %d scenario(s), none citing a rule by tag (@AUTH-3)\n", f.URI, f.Scenarios)
			continue
		}
		fmt.Fprintf(w, "%s: %d of %d scenario(s) cite %d rule(s): %s\n", f.URI, f.Citing, f.Scenarios, len(f.Rules), strings.Join(f.Rules, " "))
	}
}

// redact is for the few messages main prints itself; everything the runner
// prints is already redacted.
func redact(s, key string) string {
	return conformance.Redact(s, key)
}

// printRules prints the catalogue of docs/contract.md, each rule with how
// the kit checks it or why it cannot.
func printRules(w io.Writer) error {
	rules, err := conformance.Rules()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Rules of docs/contract.md (%d) and how conform checks each.\n", len(rules))
	area := ""
	for _, r := range rules {
		if r.Rule.Area != area {
			area = r.Rule.Area
			fmt.Fprintf(w, "\n%s\n", area)
		}
		fmt.Fprintf(w, "\n%s [%s] %s\n", r.Rule.ID, r.Rule.Level, r.Rule.Text)
		for _, c := range r.Checks {
			fmt.Fprintf(w, "    checked by %s: %s\n", c.By, c.How)
		}
		for _, p := range r.Proofs {
			fmt.Fprintf(w, "    proven by the broken sandbox: %s\n", p)
		}
		switch {
		case r.Reason != "":
			fmt.Fprintf(w, "    %s\n", r.Reason)
		case len(r.Checks) == 0:
			fmt.Fprintf(w, "    not checked by the kit yet\n")
		}
	}
	return nil
}

func printSteps(w io.Writer) {
	fmt.Fprintf(w, "Steps of the conformance library (Given/When/Then/And are interchangeable).\nA step marked (needs tag @sandbox) works only against the sandbox: tag its scenario so.\n\n")
	for _, s := range conformance.Steps() {
		fmt.Fprintf(w, "%s\n    %s\n", s.Pattern, strings.ReplaceAll(s.Example, "\n", "\n    "))
		if r := s.Requires(); r != "" {
			fmt.Fprintf(w, "    (needs %s)\n", r)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Placeholders in paths, bodies, headers and expected values:\n")
	for _, p := range conformance.BuiltinPlaceholders() {
		fmt.Fprintf(w, "  %-12s  %s\n", "{"+p.Name+"}", p.Means)
	}
	fmt.Fprintf(w, "  %-12s  %s\n\n", "{name}", `a value saved with: I save the JSON at "…" as "name"`)
	fmt.Fprintf(w, "Placeholders in `should match:` documents (objects match if every listed key matches):\n  %s\n\n",
		strings.Join(conformance.PlaceholderNames(), " "))
	fmt.Fprintf(w, "JSON paths are dotted from the top of the body: success, data.items.0.id, error.code.\n")
	fmt.Fprintf(w, "Requests time out after %s unless --timeout says otherwise.\n", kit.DefaultTimeout.Round(time.Second))
}
