package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Path: "github.com/mm-agent/mm", Version: "v0.3.1"}}, "v0.3.1"},
		{debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201101500-0123456789ab"}}, "v0.0.0-20261201101500-0123456789ab"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "8e45ac8a1b2c3d4e5f"}}}, "dev-8e45ac8a1b2c"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	} {
		if got := versionOf(&c.bi); got != c.want {
			t.Errorf("versionOf(%+v) = %q, want %q", c.bi.Main, got, c.want)
		}
	}
}
