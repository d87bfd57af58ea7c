package preexisting

// One returns one.
func One() int {
	return "one"
}

// Two returns two.
func Two() int {
	return undefinedTwo
}

// Three returns three.
func Three() string {
	return 3
}
