package manifest

import "testing"

// TestCredentialConfigKey: a config key names a credential when its
// words contain a credential mark, anywhere, unless its last word says it
// names or locates one, or the mark counts tokens.
func TestCredentialConfigKey(t *testing.T) {
	for key, want := range map[string]bool{
		"API_TOKEN": true, "GITHUB_TOKEN": true, "authToken": true, "token": true,
		"DB_PASSWORD": true, "CLIENT_SECRET": true, "api_key": true, "OPENAI_API_KEY": true,
		"apiKey": true, "AWS_SECRET_ACCESS_KEY": true, "passwd": true,
		// Containment, camelCase included: the mark need not end the key.
		"secretKey": true, "secretAccessKey": true, "GITHUB_TOKEN_2": true, "PASSWORD_PROD": true,
		"TOKEN_VALUE": true, "APIKey": true, "APITOKEN": true, "DB_SECRETS": true,
		"AWS_ACCESS_KEY": true, "accessKey": true,
		"GITHUB_PAT": true, "GH_PAT": true, "ghPat": true, "SSH_PASSPHRASE": true, "SESSION_COOKIE": true,
		"PRIVATE_KEY": true, "privateKeyPem": true, "MAX_TOKENS_SECRET": true,
		// Not credentials: token counts, names and locations of credentials.
		"MAX_TOKENS": false, "max_output_tokens": false, "TOKEN_URL": false, "SECRET_NAME": false,
		"PRIVATE_KEY_PATH": false, "AWS_ACCESS_KEY_ID": false, "apiKeyId": false, "TOKEN_TTL": false,
		"SECRET_IDS": false, "TOKEN_TYPE": false, "PASSWORD_FILE": false, "TOKEN_EXPIRY": false,
		"TOKEN_LIMIT": false, "TOKEN_COUNT": false, "OAUTH_TOKEN_URI": false,
		"REGION": false, "PATH": false, "PATTERN": false, "SPATIAL": false,
		// A mark inside a longer word, and keys that say where or whether
		// a credential is, not what it is.
		"TOKENIZER": false, "TOKEN_REQUIRED": false, "TOKEN_ENV": false, "COOKIE_DOMAIN": false,
		"SECRETS_MANAGER_REGION": false, "TOKEN_ENDPOINT": false, "SECRET_ARN": false,
	} {
		if got := CredentialConfigKey(key); got != want {
			t.Errorf("CredentialConfigKey(%q) = %v, want %v", key, got, want)
		}
	}
}
