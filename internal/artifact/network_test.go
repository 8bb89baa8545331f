package artifact

import (
	"bytes"
	"strings"
	"testing"
)

// TestNetworkRoundTrip checks the network field's wire form: references
// stay references (a secret's default is withheld), unset parts are
// omitted, and ParseAgent reads back what MarshalAgent wrote.
func TestNetworkRoundTrip(t *testing.T) {
	a := newSample(t).agent
	key := &RuntimeRef{Env: "NET_KEY", Secret: true, Default: JSON(`"hunter2"`)}
	a.Network = &Network{
		UserAgent: &String{Runtime: refDefault("NET_UA", `"fetcher/1"`)},
		Headers:   JSON(`{"X-Key":{"env":"NET_KEY","secret":true},"X-Team":"core"}`),
		Limits:    &NetworkLimits{RequestTimeoutMS: &Int{Runtime: refDefault("NET_TIMEOUT", `15000`)}, MaxRedirects: intp(2)},
		Policy: &NetworkPolicy{
			Methods:   &Strings{Values: []String{{Value: "GET"}, {Runtime: key}}},
			Allow:     []URLPattern{{Protocol: "https", Hostname: "*.acme.test"}},
			AllowSet:  true,
			Addresses: NetworkAddresses{AllowLoopback: Bool{Runtime: ref("NET_LOOPBACK")}, AllowPrivate: Bool{Value: true}},
		},
	}
	b, err := MarshalAgent(a)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("hunter2")) {
		t.Fatalf("agent.json holds a secret's default:\n%s", b)
	}
	for _, want := range []string{
		`"user_agent": {` + "\n" + `      "env": "NET_UA",`,
		`"max_redirects": 2`,
		`"allow_set": true`,
		`"allow_link_local": false`,
	} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("agent.json\ngot:\n%s\nwant: it to contain %q", b, want)
		}
	}
	for _, absent := range []string{"connect_timeout_ms", "read_timeout_ms", "concurrency_limit", "max_response_bytes"} {
		if bytes.Contains(b, []byte(absent)) {
			t.Errorf("agent.json\ngot: %s written\nwant: unset limits omitted", absent)
		}
	}
	back, err := ParseAgent(b)
	if err != nil {
		t.Fatal(err)
	}
	again, err := MarshalAgent(back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, again) {
		t.Errorf("round trip\ngot:\n%s\nwant:\n%s", again, b)
	}
	n := back.Network
	if n.Policy.Addresses.AllowLoopback.Runtime == nil || n.Policy.Addresses.AllowLoopback.Runtime.Env != "NET_LOOPBACK" ||
		n.Limits.RequestTimeoutMS.Runtime == nil || n.Policy.Methods.Values[1].Runtime == nil || !n.Policy.Methods.Values[1].Runtime.Secret {
		t.Errorf("parsed network\ngot:  %+v\nwant: its references kept", n)
	}

	a.Network = nil
	if b, _ = MarshalAgent(a); strings.Contains(string(b), `"network"`) {
		t.Errorf("no network block\ngot:\n%s\nwant: no network field", b)
	}
}
