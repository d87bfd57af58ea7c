// Package b uses package a.
package b

import "example.com/crosspkg/a"

// Nine is three times three.
func Nine() int {
	return a.Scale(3)
}
