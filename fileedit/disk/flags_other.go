//go:build !unix

package disk

// nonBlock has no equivalent here: FIFOs are a Unix affair.
const nonBlock = 0
