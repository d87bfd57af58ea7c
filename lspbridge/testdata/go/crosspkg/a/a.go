// Package a is used by package b.
package a

// Scale multiplies n by a factor.
func Scale(n int) int {
	return n * 3
}
