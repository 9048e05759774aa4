package oauthserver

import (
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// A client name in one script can still imitate a Latin one: compatibility
// forms (fullwidth ＣｈａｔＧＰＴ, mathematical 𝖢𝗁𝖺𝗍𝖦𝖯𝖳, which have no
// script) and whole-script confusables (Cherokee ᏟᎻᎪᎢᏀᏢᎢ, Cyrillic
// ОрепАІ). The first are refused by asking for NFKC text, the second by
// refusing a name whose every letter is in latinLookalikes.

// latinLookalikes are the Cyrillic, Greek and Cherokee letters that look
// like a Latin letter (a subset of the Unicode TS #39 confusables, with
// a few that only look alike in common fonts, such as Cyrillic п for n).
// Cherokee lowercase letters are matched by their uppercase.
var latinLookalikes = func() map[rune]bool {
	m := map[rune]bool{}
	for _, set := range []string{
		"АВСЕНІЈКМОРЅТХУҮԚԜӀ" + "асеіјорѕхуүһԁԛԝпьк", // Cyrillic
		"ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ" + "αικνορτυ",                // Greek
		"ᎪᏴᏟᎠᎬᏀᎻᎥᏆᎫᏦᏞᎷᎾᏫᏢᏒᏚᎢᏙᏉᎳᏔᎽᏃᎩ",                 // Cherokee
	} {
		for _, r := range set {
			m[r] = true
		}
	}
	return m
}()

// confusableName reports whether name is not in NFKC form, or is written
// only in letters that look Latin without being Latin.
func confusableName(name string) bool {
	if !norm.NFKC.IsNormalString(name) {
		return true
	}
	letters, lookalike := 0, 0
	for _, r := range name {
		if !unicode.IsLetter(r) {
			continue
		}
		letters++
		if latinLookalikes[r] || unicode.Is(unicode.Cherokee, r) && latinLookalikes[unicode.ToUpper(r)] {
			lookalike++
		}
	}
	return letters > 0 && lookalike == letters
}
