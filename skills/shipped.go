package skills

import (
	"embed"
	"io/fs"
)

//go:embed shipped/*.md
var shipped embed.FS

// Shipped is the source of the skills that come with mm, the
// farthest of all: any user skill of the same name wins.
func Shipped() Source {
	sub, err := fs.Sub(shipped, "shipped")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return Source{FS: sub}
}
