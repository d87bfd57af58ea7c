// Package config reads mm's YAML configuration (the canonical keys shared
// with the original mm), applies the MM_* environment overrides, and
// reports mistakes with the line they are on. It also holds workspace
// trust: a repository's own .mm/agent.yaml is laid over the user's own
// config, never in its place, and may only tighten it until the user
// has trusted its content (layer, Trust). Only cmd/ reads files and the
// environment; the packages below get plain values.
//
// It is nearly a leaf: besides the standard library and YAML it imports
// only engine/llm (the provider names it checks), fileedit/disk (the one
// bounded reader), internal/textdist (its "did you mean" hints), permit
// (how untrusted text is shown) and permit/trust (workspace trust). It knows no front end,
// engine session or tool (cmd/mm/deps_test.go holds it to that).
package config
