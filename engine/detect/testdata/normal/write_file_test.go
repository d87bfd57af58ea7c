package inventory

import "testing"

func TestParseQuantity(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true},
		{"1", 1, true},
		{"12", 12, true},
		{"-3", 0, false},
		{"", 0, false},
		{" 7", 7, true},
		{"7 ", 7, true},
		{"1e3", 0, false},
		{"0x10", 0, false},
		{"99999", 99999, true},
	}
	for _, tt := range tests {
		got, err := ParseQuantity(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseQuantity(%q) error = %v, want ok %v", tt.in, err, tt.ok)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseQuantity(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestReportAlignment(t *testing.T) {
	items := []Item{
		{SKU: "A-1", Name: "bolt", Quantity: 10, PriceCents: 25},
		{SKU: "A-2", Name: "nut", Quantity: 20, PriceCents: 10},
		{SKU: "B-1", Name: "washer", Quantity: 3, PriceCents: 5},
	}
	got := Report(items)
	want := "" +
		"SKU      NAME                 QTY   VALUE\n" +
		"----------------------------------------\n" +
		"A-1      bolt                  10    2.50\n" +
		"A-2      nut                   20    2.00\n" +
		"B-1      washer                 3    0.15\n" +
		"----------------------------------------\n" +
		"TOTAL                                4.65"
	if got != want {
		t.Errorf("Report() =\n%s\nwant\n%s", got, want)
	}
}
