package docs_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// verifierMain calls the Go verifier of webhooks.md on a delivery given as
// arguments, once as received and once with its body changed.
const verifierMain = `package main

import (
	"fmt"
	"net/http"
	"os"
)

func main() {
	body, err := os.ReadFile(os.Args[4])
	if err != nil {
		panic(err)
	}
	header := http.Header{}
	header.Set("Webhook-Timestamp", os.Args[2])
	header.Set("Webhook-Signature", os.Args[3])
	fmt.Println(validSignature(os.Args[1], header, body), validSignature(os.Args[1], header, append(body, ' ')))
}
`

// TestGoVerifierChecksARealDelivery runs the Go verifier of webhooks.md, as
// written, on a delivery the sandbox really made: it must accept it, and
// refuse it once the body is changed.
func TestGoVerifierChecksARealDelivery(t *testing.T) {
	blocks, err := readBlocks("webhooks.md", "go")
	if err != nil {
		t.Fatal(err)
	}
	var verifier string
	for _, b := range blocks {
		if strings.Contains(b.text, "func validSignature(") {
			verifier = b.text
		}
	}
	if verifier == "" {
		t.Fatal("webhooks.md has no Go block with func validSignature")
	}

	type delivery struct {
		header http.Header
		body   []byte
	}
	deliveries := make(chan delivery, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case deliveries <- delivery{r.Header.Clone(), body}:
		default:
		}
	}))
	defer receiver.Close()
	srv, err := sandboxtest.Start(sandboxtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	}()
	send := func(path, body string) []byte {
		req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer svc_test_docswebhook")
		req.Header.Set("Content-Type", "application/json")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		answer, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %d %s", path, res.StatusCode, answer)
		}
		return answer
	}
	var registered struct {
		Data struct{ Secret string }
	}
	if err := json.Unmarshal(send("/v1/webhooks", `{"url":"`+receiver.URL+`/hooks","events":["campaign.created"]}`), &registered); err != nil {
		t.Fatal(err)
	}
	send("/v1/campaigns", `{"name":"Checkout","platform":"ios","testersRequired":10,"rewardPerBug":19.99}`)
	var got delivery
	select {
	case got = <-deliveries:
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery within 30 s")
	}

	dir := t.TempDir()
	files := map[string]string{
		"verifier.go": strings.Replace(verifier, "package receiver", "package main", 1),
		"main.go":     verifierMain,
		"body.json":   string(got.body),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "run", "./verifier.go", "./main.go",
		registered.Data.Secret, got.header.Get("Webhook-Timestamp"), got.header.Get("Webhook-Signature"), "body.json")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run the verifier: %v\n%s", err, out)
	}
	if strings.TrimSpace(string(out)) != "true false" {
		t.Errorf("the verifier of webhooks.md said %q for the delivery as received and with its body changed, want \"true false\"", out)
	}
}
