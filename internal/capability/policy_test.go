package capability

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseOverride(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Override
		wantErr string // substring of the error; "" means no error
	}{
		{"inherit", "inherit", Override{Strategy: Inherit}, ""},
		{"extend one", "extend:math", Override{Strategy: Extend, Capabilities: []string{"math"}}, ""},
		{"extend many keeps order", "extend:net::http,math::add::fast,math", Override{Strategy: Extend, Capabilities: []string{"net::http", "math::add::fast", "math"}}, ""},
		{"replace one", "replace:fs::read", Override{Strategy: Replace, Capabilities: []string{"fs::read"}}, ""},
		{"replace star", "replace:*", Override{Strategy: Replace, Capabilities: []string{"*"}}, ""},
		{"empty", "", Override{}, "unknown strategy"},
		{"unknown strategy", "append:math", Override{}, "unknown strategy"},
		{"strategy is case sensitive", "Extend:math", Override{}, "unknown strategy"},
		{"bare extend", "extend", Override{}, "at least one"},
		{"extend with empty list", "extend:", Override{}, "at least one"},
		{"replace with empty list", "replace:", Override{}, "at least one"},
		{"inherit with list", "inherit:math", Override{}, "takes no capabilities"},
		{"inherit with empty list", "inherit:", Override{}, "takes no capabilities"},
		{"trailing comma", "extend:math,", Override{}, "invalid capability tag"},
		{"empty tag in middle", "extend:a,,b", Override{}, "invalid capability tag"},
		{"space after comma", "extend:a, b", Override{}, "invalid capability tag"},
		{"empty segment", "replace:math::", Override{}, "invalid capability tag"},
		{"leading separator", "replace:::add", Override{}, "invalid capability tag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOverride(tt.in)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseOverride(%q) error\ngot:  %v\nwant: nil", tt.in, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("ParseOverride(%q)\ngot:  %#v\nwant: %#v", tt.in, got, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ParseOverride(%q) error\ngot:  %v\nwant: error containing %q", tt.in, err, tt.wantErr)
			}
			if strings.Contains(tt.wantErr, "invalid capability tag") && !errors.Is(err, ErrInvalidTag) {
				t.Errorf("ParseOverride(%q) error does not wrap ErrInvalidTag\ngot:  %v\nwant: %v", tt.in, err, ErrInvalidTag)
			}
		})
	}
}

func TestEffective(t *testing.T) {
	holds := []string{"net", "math::add", "math::add"}
	extra := []string{"fs::read", "math::add", "fs::read"}
	tests := []struct {
		name        string
		holds       []string
		policy      Policy
		o           *Override
		want        []string
		wantWarning bool
	}{
		{"nil override locked", holds, Locked, nil, []string{"math::add", "net"}, false},
		{"nil override extensible", holds, Extensible, nil, []string{"math::add", "net"}, false},
		{"inherit locked", holds, Locked, &Override{Strategy: Inherit}, []string{"math::add", "net"}, false},
		{"inherit extensible", holds, Extensible, &Override{Strategy: Inherit}, []string{"math::add", "net"}, false},
		{"inherit ignores capabilities", holds, Extensible, &Override{Strategy: Inherit, Capabilities: extra}, []string{"math::add", "net"}, false},
		{"zero override is inherit", holds, Extensible, &Override{}, []string{"math::add", "net"}, false},
		{"extend locked is ignored", holds, Locked, &Override{Strategy: Extend, Capabilities: extra}, []string{"math::add", "net"}, true},
		{"replace locked is ignored", holds, Locked, &Override{Strategy: Replace, Capabilities: extra}, []string{"math::add", "net"}, true},
		{"extend zero policy is locked", holds, "", &Override{Strategy: Extend, Capabilities: extra}, []string{"math::add", "net"}, true},
		{"replace unknown policy is locked", holds, "open", &Override{Strategy: Replace, Capabilities: extra}, []string{"math::add", "net"}, true},
		{"extend extensible is union", holds, Extensible, &Override{Strategy: Extend, Capabilities: extra}, []string{"fs::read", "math::add", "net"}, false},
		{"replace extensible swaps", holds, Extensible, &Override{Strategy: Replace, Capabilities: extra}, []string{"fs::read", "math::add"}, false},
		{"extend empty holds", nil, Extensible, &Override{Strategy: Extend, Capabilities: extra}, []string{"fs::read", "math::add"}, false},
		{"extend with nothing", holds, Extensible, &Override{Strategy: Extend}, []string{"math::add", "net"}, false},
		{"replace with nothing", holds, Extensible, &Override{Strategy: Replace}, []string{}, false},
		{"empty holds nil override", nil, Locked, nil, []string{}, false},
		{"unknown strategy", holds, Extensible, &Override{Strategy: "merge", Capabilities: extra}, []string{"math::add", "net"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := append([]string(nil), tt.holds...)
			got, warning := Effective(tt.holds, tt.policy, tt.o)
			if got == nil || !equalStrings(got, tt.want) {
				t.Errorf("Effective tags\ngot:  %#v\nwant: %#v", got, tt.want)
			}
			if (warning != "") != tt.wantWarning {
				t.Errorf("Effective warning\ngot:  %q\nwant: warning=%v", warning, tt.wantWarning)
			}
			if !equalStrings(tt.holds, before) {
				t.Errorf("Effective modified holds\ngot:  %q\nwant: %q", tt.holds, before)
			}
		})
	}
}

func TestEffectiveDoesNotAlias(t *testing.T) {
	caps := []string{"b", "a"}
	got, _ := Effective(nil, Extensible, &Override{Strategy: Replace, Capabilities: caps})
	got[0] = "changed"
	if want := []string{"b", "a"}; !equalStrings(caps, want) {
		t.Errorf("override capabilities after modifying the result\ngot:  %q\nwant: %q", caps, want)
	}
}

// TestParseOverrideNormalForm: an override's tags are composed as the
// manifest's are, so "café" typed with a combining accent is the
// manifest's "café".
func TestParseOverrideNormalForm(t *testing.T) {
	o, err := ParseOverride("extend:cafe\u0301::read,plain")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"caf\u00e9::read", "plain"}; !slices.Equal(o.Capabilities, want) {
		t.Errorf("tags: %q, want %q", o.Capabilities, want)
	}
}
