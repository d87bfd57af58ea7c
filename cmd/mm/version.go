package main

import "runtime/debug"

// version and commit are set by the release build (scripts/release:
// -ldflags "-X main.version=v1.2.0 -X main.commit=…"). Left empty, the
// version is the module's from the build info (`go install
// github.com/mm-agent/mm/cmd/mm@v1.2.0` gives v1.2.0), else "devel" (a
// plain go build in a checkout), and the commit is the build info's VCS
// revision when the build recorded one.
var version, commit string

// mmVersion is what ACP initialize's agentInfo says.
func mmVersion() string {
	v, _ := versionOf(version, commit, buildInfo())
	return v
}

// versionLine is what --version prints: "mm VERSION (commit C)".
func versionLine() string {
	v, c := versionOf(version, commit, buildInfo())
	if c == "" {
		return "mm " + v
	}
	return "mm " + v + " (commit " + c + ")"
}

func buildInfo() *debug.BuildInfo {
	bi, _ := debug.ReadBuildInfo()
	return bi
}

// versionOf is the version and the commit (12 digits, "-dirty" when the
// build had uncommitted changes) from the release stamps, else the build
// info (nil: none).
func versionOf(stampV, stampC string, bi *debug.BuildInfo) (v, c string) {
	v, c = stampV, stampC
	if bi == nil {
		bi = &debug.BuildInfo{}
	}
	if v == "" {
		v = "devel"
		if m := bi.Main.Version; m != "" && m != "(devel)" {
			v = m
		}
	}
	if c == "" {
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				c = s.Value[:min(len(s.Value), 12)]
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && c != "" {
			c += "-dirty"
		}
	}
	return v, c
}
