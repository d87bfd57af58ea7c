// Package testenv holds what the tests of several packages need from the
// machine they run on: a real tool on PATH, a context that cannot hang a
// test forever, a directory that refuses writes. It is test code (as
// net/http/httptest is): only _test.go files may import it, which
// cmd/mm/deps_test.go enforces.
//
// One rule runs through it: a test that cannot get what it needs is
// skipped with a line saying how to get it — except when
// MM_REQUIRE_INTEGRATION=1 (scripts/test sets it when CI=true), where it
// fails instead, because CI must never pass by skipping what it exists to
// run.
package testenv
