package artifact

// Network is the workspace's top-level network block: the egress policy
// of the agent's tools (javascript fetch). Runtime values stay references.
// An agent whose workspace has no network block has no Network (the field
// is absent from agent.json), which means its tools have no network at
// all. Unset parts are nil and omitted; a host applies its defaults.
type Network struct {
	// UserAgent is the User-Agent sent with every request; nil when
	// unset.
	UserAgent *String `json:"user_agent,omitempty"`
	// Headers are sent with every request: an object of strings and
	// reference objects (often secrets), or one reference; nil when
	// unset.
	Headers JSON `json:"headers,omitempty"`
	// Limits bounds requests; nil when the block has no limits.
	Limits *NetworkLimits `json:"limits,omitempty"`
	// Policy says which requests are allowed; nil when the block has no
	// policy (any method and URL, but no loopback, private or link-local
	// address).
	Policy *NetworkPolicy `json:"policy,omitempty"`
}

// NetworkLimits bounds outgoing requests. Each field is nil when the
// manifest leaves it unset.
type NetworkLimits struct {
	ConnectTimeoutMS *Int `json:"connect_timeout_ms,omitempty"`
	ReadTimeoutMS    *Int `json:"read_timeout_ms,omitempty"`
	RequestTimeoutMS *Int `json:"request_timeout_ms,omitempty"`
	MaxRedirects     *Int `json:"max_redirects,omitempty"`
	MaxResponseBytes *Int `json:"max_response_bytes,omitempty"`
	ConcurrencyLimit *Int `json:"concurrency_limit,omitempty"`
}

// NetworkPolicy says which requests are allowed.
type NetworkPolicy struct {
	// Methods, when not nil, are the only HTTP methods allowed.
	Methods *Strings `json:"methods,omitempty"`
	// Allow lists the URL patterns a request must match one of, when
	// AllowSet. An empty list with AllowSet allows no URL at all.
	Allow []URLPattern `json:"allow"`
	// AllowSet records that the manifest wrote allow; without it any URL
	// is allowed.
	AllowSet bool `json:"allow_set"`
	// Addresses are the switches for special destination addresses.
	Addresses NetworkAddresses `json:"addresses"`
}

// NetworkAddresses are the switches that allow connections to special
// addresses, checked against the address actually connected to. Each is
// false unless the manifest says otherwise.
type NetworkAddresses struct {
	// AllowLoopback allows 127.0.0.0/8, ::1 (and the unspecified
	// address, which reaches the local host).
	AllowLoopback Bool `json:"allow_loopback"`
	// AllowPrivate allows the RFC 1918 ranges and fc00::/7.
	AllowPrivate Bool `json:"allow_private"`
	// AllowLinkLocal allows 169.254.0.0/16 and fe80::/10.
	AllowLinkLocal Bool `json:"allow_link_local"`
}

// URLPattern is one allow entry. Each component is a pattern; an empty
// one matches anything. Protocol is written without the trailing ':'.
type URLPattern struct {
	Protocol string `json:"protocol,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	Port     string `json:"port,omitempty"`
	Pathname string `json:"pathname,omitempty"`
}
