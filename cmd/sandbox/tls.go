package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// caFile is the name, in the -tls-self-signed directory, of the CA that
// clients are to trust.
const caFile = "sandbox-ca.pem"

// emulatorHost is the address an Android emulator reaches its host's
// loopback by; the self-signed certificate names it, so that an app in the
// emulator can call https://10.0.2.2:PORT.
var emulatorHost = netip.MustParseAddr("10.0.2.2")

// selfSignedValidity outlasts any sandbox's run; each start makes new ones.
const selfSignedValidity = 30 * 24 * time.Hour

// tlsConfig is the server's TLS configuration for -tls-cert and -tls-key
// (WEB-4), or -tls-self-signed (WEB-5); nil if the sandbox serves plain HTTP.
func (cfg config) tlsConfig(listening net.Addr) (*tls.Config, error) {
	var cert tls.Certificate
	switch {
	case cfg.tlsCert != "":
		var err error
		if cert, err = tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey); err != nil {
			return nil, fmt.Errorf("-tls-cert and -tls-key: %w", err)
		}
	case cfg.tlsSelfSigned != "":
		var err error
		if cert, err = selfSigned(cfg.tlsSelfSigned, certificateNames(cfg.addr, listening)); err != nil {
			return nil, fmt.Errorf("-tls-self-signed: %w", err)
		}
	default:
		return nil, nil
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		// A guard: Serve on this listener speaks HTTP/2 only if ALPN settles
		// on h2, which nothing here offers, and it must stay so, since
		// network faults act on the connection, which an HTTP/2 stream does
		// not own.
		NextProtos: []string{"http/1.1"},
	}, nil
}

// certNames are the names a server certificate is valid for.
type certNames struct {
	dns []string
	ips []netip.Addr
}

// certificateNames are localhost, loopback, the Android emulator's name
// for its host, and the address the sandbox listens on: the host given in
// -addr, or, for an unspecified one, every address of the machine.
func certificateNames(addr string, listening net.Addr) certNames {
	names := certNames{dns: []string{"localhost"}, ips: []netip.Addr{netip.IPv6Loopback(), netip.AddrFrom4([4]byte{127, 0, 0, 1}), emulatorHost}}
	host, _, _ := net.SplitHostPort(addr)
	if ip, err := netip.ParseAddr(host); err == nil && !ip.IsUnspecified() {
		names.ips = append(names.ips, ip.Unmap())
	} else if err != nil && host != "" {
		names.dns = append(names.dns, host)
	} else {
		names.ips = append(names.ips, machineAddresses()...)
	}
	if tcp, ok := listening.(*net.TCPAddr); ok && !tcp.IP.IsUnspecified() {
		if ip, ok := netip.AddrFromSlice(tcp.IP); ok {
			names.ips = append(names.ips, ip.Unmap())
		}
	}
	slices.SortFunc(names.ips, netip.Addr.Compare)
	names.ips = slices.Compact(names.ips)
	names.dns = slices.Compact(names.dns)
	return names
}

// machineAddresses are this machine's addresses that another device on its
// networks could reach: no loopback, no link-local.
func machineAddresses() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		prefix, err := netip.ParsePrefix(a.String())
		if err != nil {
			continue
		}
		ip := prefix.Addr().Unmap()
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() || ip.IsMulticast() {
			continue
		}
		out = append(out, ip)
	}
	return out
}

// selfSigned makes a CA and a server certificate it signs for names, and
// writes the CA's certificate to dir. The CA's key never leaves the
// process, and its name constraints allow only names: a device that trusts
// it trusts nothing else, during the run or after.
func selfSigned(dir string, names certNames) (tls.Certificate, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	var permittedIPs []*net.IPNet
	for _, ip := range names.ips {
		permittedIPs = append(permittedIPs, &net.IPNet{IP: ip.AsSlice(), Mask: net.CIDRMask(ip.BitLen(), ip.BitLen())})
	}
	ca := &x509.Certificate{
		Subject:                     pkix.Name{Organization: []string{"Test-Campaign sandbox"}, CommonName: "Test-Campaign sandbox CA " + now.UTC().Format(time.RFC3339)},
		NotBefore:                   now.Add(-time.Hour),
		NotAfter:                    now.Add(selfSignedValidity),
		KeyUsage:                    x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid:       true,
		IsCA:                        true,
		MaxPathLenZero:              true,
		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         names.dns,
		PermittedIPRanges:           permittedIPs,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	ca, err = x509.ParseCertificate(caDER)
	if err != nil {
		return tls.Certificate{}, err
	}
	serverKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	var ips []net.IP
	for _, ip := range names.ips {
		ips = append(ips, ip.AsSlice())
	}
	leaf := &x509.Certificate{
		Subject:     pkix.Name{Organization: []string{"Test-Campaign sandbox"}, CommonName: "localhost"},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(selfSignedValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    names.dns,
		IPAddresses: ips,
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &serverKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return tls.Certificate{}, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	if err := writeCA(filepath.Join(dir, caFile), caPEM); err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{leafDER, caDER}, PrivateKey: serverKey}, nil
}

// writeCA writes the CA's certificate to path as a new file of mode 0644,
// never through a symlink someone left there nor into an existing file's
// looser mode: it is written beside path and renamed over it, which
// replaces a symlink rather than following it.
func writeCA(path string, caPEM []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+caFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(caPEM); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
