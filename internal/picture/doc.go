// Command picture makes docs/mm-at-work.svg, the picture at the top of
// the README, from a real run: it builds mm and the scripted model server
// (cmd/fakellm), lays out the small Go project of session.txtar in a
// temporary directory, runs `mm -p` there on a pseudo-terminal, answers
// its permission questions as session.txtar says, and draws what the
// terminal showed as an SVG of text lines (diffable, no fonts or images
// embedded).
//
//	go run ./internal/picture [-o docs/mm-at-work.svg] [-check]
//
// (./scripts/picture runs it from the repository's root.) Only the model
// is scripted; the file tools, the permission questions, the edit's diff
// and `go test` are mm's and Go's own. -check draws the picture again and
// exits 1 when its text differs from the committed one's, digits aside
// (durations, token counts and the session id change from run to run);
// TestPictureIsCurrent does the same in the tests.
package main
