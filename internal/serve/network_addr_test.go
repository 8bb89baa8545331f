package serve

import (
	"net/url"
	"testing"
)

// TestNetworkAddressClasses: addresses that reach inside networks are
// refused by default, also when wrapped in IPv6 (IPv4-mapped, NAT64,
// 6to4) or in the shared address space.
func TestNetworkAddressClasses(t *testing.T) {
	nw := &network{}
	for _, tc := range []struct {
		addr    string
		refused bool
	}{
		{"127.0.0.1:80", true},
		{"[::1]:80", true},
		{"0.0.0.0:80", true},
		{"10.1.2.3:80", true},
		{"100.100.100.200:80", true},
		{"169.254.169.254:80", true},
		{"[::ffff:127.0.0.1]:80", true},
		{"[64:ff9b::a9fe:a9fe]:80", true}, // NAT64 of 169.254.169.254
		{"[2002:0a00:0001::1]:80", true},  // 6to4 of 10.0.0.1
		{"[fd00::1]:80", true},
		{"[fe80::1]:80", true},
		{"93.184.216.34:443", false},
		{"[2606:4700::1111]:443", false},
		{"[64:ff9b::5db8:d822]:443", false}, // NAT64 of a public address
	} {
		err := nw.control("tcp", tc.addr, nil)
		if (err != nil) != tc.refused {
			t.Errorf("%s: refused %v (%v), want %v", tc.addr, err != nil, err, tc.refused)
		}
	}
}

func TestAmbiguousPath(t *testing.T) {
	for raw, want := range map[string]bool{
		"https://a.test/api/v1/items":    false,
		"https://a.test/api/..%2Fadmin":  true,
		"https://a.test/api/..%2fadmin":  true,
		"https://a.test/api/%5c..%5cx":   true,
		"https://a.test/api/..;/admin":   true,
		"https://a.test/api/a%20b?q=%2F": false,
		"https://a.test/api/caf%C3%A9/x": false,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := ambiguousPath(u); got != want {
			t.Errorf("%s: %v, want %v", raw, got, want)
		}
	}
}
