package conformance_test

import (
	"context"
	"fmt"
	"log"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// Checking a deployment, here a sandbox, on the scenarios of one area:
// the exit code is the conform command's.
func ExampleRun() {
	srv, err := sandboxtest.Start(sandboxtest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	report, err := conformance.Run(context.Background(), kit.Config{
		BaseURL: srv.URL,
		APIKey:  "svc_test_example",
		Profile: kit.ProfileSandbox,
		Tags:    "@campaigns",
		Format:  kit.FormatNone,
		Explore: -1,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("exit code:", report.ExitCode())
	fmt.Println("failed:", len(report.With(kit.Failed)))
	fmt.Println("some passed:", len(report.With(kit.Passed)) > 0)
	if err := srv.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// exit code: 0
	// failed: 0
	// some passed: true
}
