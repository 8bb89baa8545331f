package manifest

import (
	"slices"
	"strings"
	"unicode"
)

// credentialConfigMarks mark a config key as a credential when its words
// (see configKeyWords), joined with "_", contain one of them: GITHUB_TOKEN,
// GITHUB_TOKEN_2, TOKEN_VALUE, secretAccessKey, DB_PASSWORD_PROD.
var credentialConfigMarks = []string{"ACCESS_KEY", "API_KEY", "APIKEY", "COOKIE", "PASSPHRASE", "PASSWD", "PASSWORD", "PRIVATE_KEY", "SECRET", "TOKEN"}

// credentialConfigWords mark a config key as a credential when one of its
// words is one of them: GITHUB_PAT, GH_PAT (but not PATH or PATTERN).
var credentialConfigWords = []string{"PAT"}

// nonCredentialLastWords mark a config key as not a credential when its
// last word is one of them, whatever it contains: TOKEN_URL, SECRET_NAME,
// PRIVATE_KEY_PATH, AWS_ACCESS_KEY_ID name or locate a credential, they
// do not hold one.
var nonCredentialLastWords = []string{"URL", "URI", "PATH", "FILE", "NAME", "ID", "IDS", "TYPE", "TTL", "EXPIRY", "COUNT", "LIMIT",
	"ENV", "VAR", "ENDPOINT", "HOST", "DOMAIN", "REGION", "ARN", "PORT", "HEADER", "PREFIX", "SCOPE", "SCOPES", "KIND",
	"REQUIRED", "ENABLED", "DISABLED"}

// configKeyWords splits a config key into upper-case words: at "_", "-",
// "." and other non-alphanumerics, and at camelCase boundaries
// (secretAccessKey is SECRET ACCESS KEY, APIKey is API KEY).
func configKeyWords(key string) []string {
	var words []string
	rs := []rune(key)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, strings.ToUpper(string(rs[start:end])))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start >= 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(rs))
	return words
}

// CredentialConfigKey reports whether a tool config key names a
// credential (the audit redacts and reports such keys' values, and a
// plan's attributes keep them only as digests): its words (configKeyWords) joined with "_" contain one of
// credentialConfigMarks ending where a word ends, or one word is one of
// credentialConfigWords,
// unless the last word is one of nonCredentialLastWords. A word ending in
// TOKENS (MAX_TOKENS, max_output_tokens) counts tokens: it does not mark
// the key.
func CredentialConfigKey(key string) bool {
	words := configKeyWords(key)
	if len(words) == 0 || slices.Contains(nonCredentialLastWords, words[len(words)-1]) {
		return false
	}
	kept := words[:0:0]
	for _, w := range words {
		if slices.Contains(credentialConfigWords, w) {
			return true
		}
		if strings.HasSuffix(w, "TOKENS") {
			// Keep the word's place so that no mark spans it.
			w = "-"
		}
		kept = append(kept, w)
	}
	joined := strings.Join(kept, "_")
	for _, m := range credentialConfigMarks {
		// A mark ends where a word ends (APITOKEN, GITHUB_TOKEN_2), so
		// that TOKENIZER is not one; SECRETS holds secrets too.
		for i := strings.Index(joined, m); i >= 0; {
			end := i + len(m)
			rest := joined[end:]
			if rest == "" || rest[0] == '_' || m == "SECRET" && (rest == "S" || strings.HasPrefix(rest, "S_")) {
				return true
			}
			next := strings.Index(joined[i+1:], m)
			if next < 0 {
				break
			}
			i += 1 + next
		}
	}
	return false
}
