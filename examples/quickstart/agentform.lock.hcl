# This file is maintained automatically by "agentform". Manual edits may be lost.

skill "research" {
  source = "h1:RbTrokOmxOcRTVyVAE2JkiGbm2V9c3zMaDx4Uswxb0I="
}

tool "word_count" {
  kind    = "javascript"
  source  = "h1:Pigh27TpDe8TOTdT55Z2iDZvRdEJ0aC7loM4x/MdxoQ="
  bundle  = "sha256:08f8c90ead34c53d1e10f765ff261d53c777c2f94aee010a3947e8c344d40ad9"
  bundler = "esbuild 0.28.2"
}
