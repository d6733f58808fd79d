package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

func TestParseTLSFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-tls-cert", "c.pem", "-tls-key", "k.pem"}, io.Discard)
	if err != nil || cfg.tlsCert != "c.pem" || cfg.tlsKey != "k.pem" {
		t.Errorf("-tls-cert and -tls-key: %+v, %v", cfg, err)
	}
	for _, bad := range [][]string{{"-tls-cert", "c.pem"}, {"-tls-key", "k.pem"}, {"-tls-cert", "c.pem", "-tls-key", "k.pem", "-tls-self-signed", "dir"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil || !strings.Contains(err.Error(), "-tls-") {
			t.Errorf("%v: %v, want a refusal that names the flags", bad, err)
		}
	}
}

// trusting is an HTTP client that trusts only the CA in the PEM file, and
// offers HTTP/2 as browsers and SDKs do.
func trusting(t testing.TB, caPath string) *http.Client {
	t.Helper()
	pemBytes, err := os.ReadFile(caPath)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatalf("%s holds no certificate", caPath)
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	t.Cleanup(transport.CloseIdleConnections)
	return &http.Client{Transport: transport, Timeout: 30 * time.Second}
}

func getWith(t *testing.T, client *http.Client, url, key string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res, err
}

// A client that trusts the CA written by -tls-self-signed talks HTTPS to
// the sandbox, by its address and by localhost; one that does not trust it
// is refused. (WEB-5)
func TestSelfSignedTLS(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	base, listening, stop := startRunLogged(t, config{tlsSelfSigned: dir})
	defer stop()
	if !strings.HasPrefix(base, "https://127.0.0.1:") {
		t.Fatalf("the sandbox announced %s, want an https:// URL", base)
	}
	caPath := filepath.Join(dir, caFile)
	if !strings.Contains(listening, "ca="+caPath) {
		t.Errorf("the log does not say where the CA is: %s", listening)
	}
	client := trusting(t, caPath)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(base, "https://"))
	for _, url := range []string{base, "https://localhost:" + port} {
		res, err := getWith(t, client, url+"/v1/campaigns/cmp_000001", "svc_test_tls_client")
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		if res.StatusCode != http.StatusOK || res.TLS == nil || res.Proto != "HTTP/1.1" {
			t.Errorf("%s: %d over %s, TLS %v; want 200 over HTTP/1.1 in TLS", url, res.StatusCode, res.Proto, res.TLS != nil)
		}
	}

	var unknown x509.UnknownAuthorityError
	if _, err := getWith(t, &http.Client{}, base+"/healthz", ""); !errors.As(err, &unknown) {
		t.Errorf("a client that does not trust the CA: %v, want an unknown authority", err)
	}
	// Plain HTTP on the HTTPS port gets an envelope that says where to go.
	// (WEB-9)
	checkHTTPSRequired(t, http.DefaultClient, "GET", "http://127.0.0.1:"+port+"/v1/campaigns", nil, base)
}

// The certificate names the host of -addr, as an address or as a DNS
// name, or for an unspecified one every address of the machine, since
// clients may reach the sandbox by any of them.
func TestCertificateNames(t *testing.T) {
	always := []netip.Addr{netip.MustParseAddr("::1"), netip.MustParseAddr("127.0.0.1"), emulatorHost}
	for _, c := range []struct {
		addr      string
		listening net.Addr
		dns       []string
		ips       []netip.Addr
	}{
		{"127.0.0.1:8443", nil, []string{"localhost"}, nil},
		{"192.0.2.7:8443", nil, []string{"localhost"}, []netip.Addr{netip.MustParseAddr("192.0.2.7")}},
		{"[::ffff:192.0.2.7]:8443", nil, []string{"localhost"}, []netip.Addr{netip.MustParseAddr("192.0.2.7")}},
		{"sandbox.test:8443", nil, []string{"localhost", "sandbox.test"}, nil},
		{"0.0.0.0:8443", nil, []string{"localhost"}, machineAddresses()},
		{"[::]:8443", nil, []string{"localhost"}, machineAddresses()},
		{":8443", nil, []string{"localhost"}, machineAddresses()},
		{"127.0.0.1:0", &net.TCPAddr{IP: net.ParseIP("192.0.2.9"), Port: 8443}, []string{"localhost"}, []netip.Addr{netip.MustParseAddr("192.0.2.9")}},
	} {
		got := certificateNames(c.addr, c.listening)
		want := append(slices.Clone(always), c.ips...)
		slices.SortFunc(want, netip.Addr.Compare)
		want = slices.Compact(want)
		if !slices.Equal(got.dns, c.dns) || !slices.Equal(got.ips, want) {
			t.Errorf("certificateNames(%q, %v) = %v %v, want %v %v", c.addr, c.listening, got.dns, got.ips, c.dns, want)
		}
	}
}

// The CA signs for the names the server needs and for nothing else, so a
// device that trusts it is not open to certificates for other hosts.
func TestSelfSignedCAIsConstrainedToTheSandboxsNames(t *testing.T) {
	dir := t.TempDir()
	names := certificateNames("127.0.0.1:8443", nil)
	cert, err := selfSigned(dir, names)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, err := os.ReadFile(filepath.Join(dir, caFile))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(pemBytes)
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !ca.IsCA || !slices.Equal(ca.PermittedDNSDomains, []string{"localhost"}) || len(ca.PermittedIPRanges) != len(names.ips) {
		t.Errorf("the CA: IsCA %v, DNS %v, IP ranges %v", ca.IsCA, ca.PermittedDNSDomains, ca.PermittedIPRanges)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	for _, name := range []string{"localhost", "127.0.0.1", "::1", "10.0.2.2"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name}); err != nil {
			t.Errorf("the server certificate for %s: %v", name, err)
		}
	}
	if err := leaf.VerifyHostname("example.com"); err == nil {
		t.Error("the server certificate is valid for example.com")
	}
}

// -tls-cert and -tls-key serve the certificate given. (WEB-4)
func TestTLSCertAndKey(t *testing.T) {
	dir := t.TempDir()
	cert, err := selfSigned(dir, certificateNames("127.0.0.1:0", nil))
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem")
	var chain []byte
	for _, der := range cert.Certificate {
		chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	if err := os.WriteFile(certPath, chain, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop := startRun(t, config{tlsCert: certPath, tlsKey: keyPath})
	defer stop()
	res, err := getWith(t, trusting(t, filepath.Join(dir, caFile)), base+"/v1/campaigns", "svc_test_tls_cert_key")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET over the given certificate: %v, %v", res, err)
	}
	if !slices.Equal(res.TLS.PeerCertificates[0].Raw, cert.Certificate[0]) {
		t.Error("the sandbox served another certificate than -tls-cert's")
	}

	if err := run(t.Context(), config{addr: "127.0.0.1:0", tlsCert: certPath, tlsKey: filepath.Join(dir, "missing.pem")}, io.Discard); err == nil || !strings.Contains(err.Error(), "-tls-cert") {
		t.Errorf("a missing key file: %v, want an error that names the flags", err)
	}
}

// Network faults over TLS reach the client as they do over plain HTTP,
// through the connection limiter and the TLS layer: a reset is a TCP reset
// with no TLS close_notify before it, so that a client sees a reset, not
// an orderly end; a close is an orderly end before any answer. (WEB-5)
func TestNetworkFaultsOverTLS(t *testing.T) {
	dir := t.TempDir()
	base, stop := startRun(t, config{tlsSelfSigned: dir, maxConns: 64})
	defer stop()
	const key = "svc_test_network_faults_tls"
	hc := trusting(t, filepath.Join(dir, caFile))
	addr := strings.TrimPrefix(base, "https://")
	send := func(t *testing.T) net.Conn {
		t.Helper()
		conn, err := tls.Dial("tcp", addr, hc.Transport.(*http.Transport).TLSClientConfig)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "GET /v1/campaigns HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", addr, key)
		return conn
	}

	networkFaults(t, sandboxtest.NewControls(base, key).WithHTTPClient(hc), send)
}

// With an unspecified address the sandbox prints a URL a client on this
// machine can use, and logs the URLs of the machine's own addresses. (WEB-8)
func TestAnUnspecifiedAddressPrintsAUsableURL(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0"} {
		t.Run(addr, func(t *testing.T) {
			printed, announce := io.Pipe()
			defer printed.Close()
			_, listening, stop := startRunLogged(t, config{addr: addr, announce: announce})
			defer stop()
			line, err := bufio.NewReader(printed).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			url := strings.TrimSpace(line)
			if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+$`).MatchString(url) || !strings.Contains(listening, "url="+url) {
				t.Fatalf("printed %q and logged %s; want http://127.0.0.1:PORT in both", url, listening)
			}
			if res, err := getWith(t, http.DefaultClient, url+"/healthz", ""); err != nil || res.StatusCode != http.StatusOK {
				t.Fatalf("GET %s/healthz: %v, %v", url, res, err)
			}
			_, port, _ := net.SplitHostPort(strings.TrimPrefix(url, "http://"))
			var want []string
			for _, ip := range machineAddresses() {
				want = append(want, "http://"+net.JoinHostPort(ip.String(), port))
			}
			if len(want) > 0 && !strings.Contains(listening, "machine_urls="+strings.Join(want, ",")) {
				t.Errorf("the log %s does not list the machine's addresses %v", listening, want)
			}
		})
	}
}

// The CA is written as a new file of mode 0644 in its directory: a symlink
// left there is replaced, not followed, and an existing file's looser mode
// is not kept.
func TestTheCAIsWrittenAsANewFile(t *testing.T) {
	dir := t.TempDir()
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(elsewhere, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, caFile)
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	if err := writeCA(link, []byte("ca")); err != nil {
		t.Fatal(err)
	}
	if kept, _ := os.ReadFile(elsewhere); string(kept) != "keep" {
		t.Errorf("the symlink's target now holds %q", kept)
	}
	info, err := os.Lstat(link)
	if err != nil || info.Mode() != 0o644 {
		t.Errorf("the CA file: %v (%v), want a regular file of mode 0644", info.Mode(), err)
	}
	loose := filepath.Join(dir, "loose.pem")
	if err := os.WriteFile(loose, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(loose, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := writeCA(loose, []byte("ca")); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(loose); err != nil || info.Mode() != 0o644 {
		t.Errorf("over a file of mode 0666: %v (%v), want 0644", info.Mode(), err)
	}
}
