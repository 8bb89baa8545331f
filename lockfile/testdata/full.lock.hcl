# This file is maintained automatically by "agentform". Manual edits may be lost.

skill "arithmetic" {
  source = "h1:aI646MBXgN+l8V+8F07OSxqYybjX5xZN0KGv/nAGLWM="
}

skill "writing" {
  source = "h1:fig0pNLtA0ZVWV0PeiYWu62fxwgPH5DMH66lvhn0Lbs="
}

tool "adder" {
  kind    = "javascript"
  source  = "h1:pHV+pDbBQN1VkeVjWxXMqOdbhQGwO5nx2j3dldrz1Co="
  deps    = "sha256:5d4618661b55cbce413b296ca578eaf1bfd1b295c7f5eacdf7e8dd8c171c672b"
  bundle  = "sha256:9eba72e70372dd2cb96af5dd4055ba24eb6eaec7c0abfd00ca299f3fc8fd30a5"
  bundler = "esbuild 0.28.2"
}

tool "formatter" {
  kind    = "javascript"
  source  = "h1:F1Egltvf9ChQ/GKG7oa8ukfXm8/WEsR1h1b4gmlB6cA="
  bundle  = "sha256:e99d324c2e9780d774e7a0552b896345348124b4a7b442c5b4d921154e212361"
  bundler = "esbuild 0.28.2"
}

tool "github" {
  kind          = "mcp"
  server        = { name = "github-mcp", version = "1.4.0" }
  hashed_fields = ["annotations", "description", "inputSchema", "name", "outputSchema"]
  tools = {
    "create_issue" = "sha256:629686cbcc7fca252a48a58820c6e0944928f404c6c057ffb0ff7067faf82e41"
    "search.repos" = "sha256:10d13f8ffe70b84125f28b77e33f985503031be519a450429b9a289a2d9e96ab"
  }
  definitions = {
    "create_issue" = "{\"description\":\"Create an issue in a repository — the \\\"owner/repo\\\" form, e.g. $${owner}/%%{repo}.\\nNever\\tmind.\",\"inputSchema\":{\"properties\":{\"repo\":{\"type\":\"string\"},\"title\":{\"type\":\"string\"}},\"required\":[\"repo\",\"title\"],\"type\":\"object\"},\"name\":\"create_issue\"}"
    "search.repos" = "{\"description\":\"Search repositories.\",\"inputSchema\":{\"properties\":{\"q\":{\"type\":\"string\"}},\"type\":\"object\"},\"name\":\"search.repos\"}"
  }
}

tool "planner" {
  kind         = "a2a"
  card         = "sha256:55697ddf5a2d00b8778a86c505c6ae176e4b81a6322402fbdc87bbe1cd2efd84"
  card_name    = "Planner"
  card_version = "1.2.0"
}

tool "weather" {
  kind        = "python"
  source      = "h1:Z3/6XaQGio92dyn1bWftjfauuzrTGqg6KlhBbLtDtak="
  uv_lock     = "sha256:e69d892e090011fca4f05eca5114edf1521b096fb27d4fdbb018f3a0094e65c0"
  interpreter = "embedded"
}
