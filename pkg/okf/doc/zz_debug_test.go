package doc

import (
	"strings"
	"testing"
	"time"
)

func TestZZPathological(t *testing.T) {
	lim := Limits{MaxNodes: 1 << 30, MaxDepth: 1 << 20}
	cases := map[string]string{
		"flow items":      "a: [" + strings.Repeat("ä,", 30000) + "x]\n",
		"flow items ascii": "a: [" + strings.Repeat("a,", 30000) + "x]\n",
		"many keys":       strings.Repeat("k: v\n", 100)[:0] + func() string { var b strings.Builder; for i := 0; i < 6000; i++ { b.WriteString("k" + itoa(i) + ": v\n") }; return b.String() }(),
		"deep seq":        strings.Repeat("- ", 30000) + "x\n",
		"deep flow":       "a: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n",
		"long plain":      "a: x\n" + strings.Repeat("  y\n", 15000),
		"blank lines":     "a:" + strings.Repeat("\n", 60000) + "b: 1\n",
		"deep indent":     func() string { var b strings.Builder; for i := 0; i < 300; i++ { b.WriteString(strings.Repeat(" ", i) + "k:\n") }; return b.String() }(),
		"comments":        strings.Repeat("# c\n", 15000) + "a: 1\n",
	}
	for name, fm := range cases {
		src := "---\n" + fm + "---\n"
		st := time.Now()
		_, err := Parse([]byte(src), Limits{MaxFrontmatterBytes: 1 << 20, MaxNodes: lim.MaxNodes, MaxDepth: lim.MaxDepth})
		t.Logf("%-16s %7d bytes %v err=%v", name, len(fm), time.Since(st), err)
	}
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + func() string { s := ""; if i == 0 { return "0" }; for ; i > 0; i /= 10 { s = string(rune('0'+i%10)) + s }; return s }()) }
