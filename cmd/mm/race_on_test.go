//go:build race

package main

// raceBuild makes the end-to-end tests build the mm binary with -race when
// the tests themselves run with it.
const raceBuild = true
