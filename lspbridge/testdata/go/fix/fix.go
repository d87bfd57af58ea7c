package fix

// Half halves n.
func Half(n int) int {
	return n / twoo
}

const two = 2
