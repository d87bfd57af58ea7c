package runlater

// The tables of files that run later, for the test that keeps the
// list of docs/security.md in step with them.
var (
	RunLaterDirs     = runLaterDirs
	RunLaterFiles    = runLaterFiles
	RunLaterSuffixes = runLaterSuffixes
)
