package main

import (
	"runtime/debug"
	"testing"
)

// TestVersionOf: a release build says its stamped version and commit; go
// install of a tagged module says the module version; a plain go build in
// a checkout says devel and the commit it was built from.
func TestVersionOf(t *testing.T) {
	t.Parallel()
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "8e45ac8a1b2c3d4e5f"}}
	for _, c := range []struct {
		stampV, stampC string
		bi             *debug.BuildInfo
		want, wantC    string
	}{
		{"v0.3.1", "0123456789ab", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "v0.3.1", "0123456789ab"},
		{"", "", &debug.BuildInfo{Main: debug.Module{Path: "github.com/mm-agent/mm", Version: "v0.3.1"}}, "v0.3.1", ""},
		{"", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201101500-0123456789ab"}}, "v0.0.0-20261201101500-0123456789ab", ""},
		{"", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "devel", "8e45ac8a1b2c"},
		{"", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, "devel", "8e45ac8a1b2c-dirty"},
		{"", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel", ""},
		{"", "", nil, "devel", ""},
	} {
		v, cm := versionOf(c.stampV, c.stampC, c.bi)
		if v != c.want || cm != c.wantC {
			t.Errorf("versionOf(%q, %q, %+v) = %q, %q; want %q, %q", c.stampV, c.stampC, c.bi, v, cm, c.want, c.wantC)
		}
	}
}
