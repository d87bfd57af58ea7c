// Package textdist measures how far apart two short strings are, for the
// "did you mean" hints mm gives on a mistyped name (a config key, a
// skill). It is a leaf: the standard library only, so that leaves such as
// skills may import it.
package textdist
