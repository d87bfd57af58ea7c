//go:build unix

package testenv

import (
	"testing"
	"time"
)

// The slots bound language servers across the machine: with every slot
// taken, one more waits until one is let go.
func TestLanguageServerSlotsBound(t *testing.T) {
	var held []func()
	for range languageServerSlots() {
		release, err := languageServerSlot()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, release)
	}
	got := make(chan func(), 1)
	go func() {
		release, err := languageServerSlot()
		if err != nil {
			t.Error(err)
		}
		got <- release
	}()
	select {
	case r := <-got:
		r()
		t.Fatalf("a slot was given while all %d were held", len(held))
	case <-time.After(300 * time.Millisecond):
	}
	held[0]()
	select {
	case r := <-got:
		r()
	case <-time.After(time.Minute):
		t.Fatal("no slot after one was let go")
	}
	for _, r := range held[1:] {
		r()
	}
}
