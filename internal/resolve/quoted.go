package resolve

import (
	"encoding/json"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// quotes reports whether any string of a decoded JSON value (object keys
// included) contains one of needles, or any number is one. Decoded, so
// that escapes in the JSON text (\u0026, \") cannot hide a needle; and
// compared NFC-normalised too, so that composing its accents differently
// cannot (the lockfile stores names normalised).
func quotes(v any, needles []string) bool {
	switch x := v.(type) {
	case string:
		for _, n := range needles {
			if n != "" && (strings.Contains(x, n) || strings.Contains(norm.NFC.String(x), norm.NFC.String(n))) {
				return true
			}
		}
	case json.Number:
		for _, n := range needles {
			if string(x) == n {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if quotes(e, needles) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if quotes(k, needles) || quotes(e, needles) {
				return true
			}
		}
	}
	return false
}
