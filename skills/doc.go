// Package skills finds skill files, parses them, keeps the catalog and
// rewrites `$name params` and `/name params` in a prompt into the line that
// tells the model to load the skill.
//
// A skill follows the open Agent Skills layout: a folder NAME/SKILL.md (its
// other files travel with it), or a single NAME.md, with YAML front matter
// (name, description, up to 8 keywords, an optional argument-hint).
//
// Invariants:
//   - skills is a leaf: it knows nothing of the engine, tools or front ends.
//   - Sources are given nearest first; on a name clash the nearer skill wins.
//   - A malformed file is skipped with one warning naming the file and the
//     problem; the other skills still load.
//   - The catalog text is a pure function of the skill set (sorted by
//     name), so a tool description built from it is byte-stable.
package skills
