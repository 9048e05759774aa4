package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type deriveKid struct {
	N    int         `json:"n" schema:"min=0,max=9"`
	Kids []deriveKid `json:"kids,omitempty" schema:"max=3"`
}

type deriveIn struct {
	ID    string    `json:"id" jsonschema:"Its id." schema:"id"`
	Title string    `json:"title,omitempty" schema:"min=1,max=@title"`
	Kind  string    `json:"kind,omitempty" schema:"enum=a|b,default=a"`
	Tier  string    `json:"tier" schema:"enum=@tier,optional"`
	Flag  *bool     `json:"flag,omitempty" schema:"default=true"`
	Maybe *int      `json:"maybe" schema:"min=0,max=5,nullable"`
	Tags  []string  `json:"tags,omitempty" schema:"max=4,itemmax=10,itemdesc=One tag."`
	Kid   deriveKid `json:"kid"`
}

func TestForAppliesTags(t *testing.T) {
	v := Vocabulary{
		Enums:  map[string][]string{"tier": {"x", "y"}},
		Bounds: map[string]int64{"title": 500},
		Defs:   map[reflect.Type]string{reflect.TypeFor[deriveKid](): "kid"},
	}
	s, err := For[deriveIn](v)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(s)
	want := `{"$defs":{"kid":{"additionalProperties":false,"properties":{"kids":{"items":{"$ref":"#/$defs/kid"},"maxItems":3,"type":"array"},"n":{"maximum":9,"minimum":0,"type":"integer"}},"required":["n"],"type":"object"}},` +
		`"additionalProperties":false,"properties":{"flag":{"default":true,"type":"boolean"},"id":{"description":"Its id.","pattern":"^[0-9a-f]{32}$","type":"string"},` +
		`"kid":{"$ref":"#/$defs/kid"},"kind":{"default":"a","enum":["a","b"],"type":"string"},"maybe":{"maximum":5,"minimum":0,"type":["integer","null"]},` +
		`"tags":{"items":{"description":"One tag.","maxLength":10,"type":"string"},"maxItems":4,"type":"array"},"tier":{"enum":["x","y"],"type":"string"},` +
		`"title":{"maxLength":500,"minLength":1,"type":"string"}},"required":["id","maybe","kid"],"type":"object"}`
	if string(got) != want {
		t.Fatalf("For:\n got %s\nwant %s", got, want)
	}
	if p := CheckSubset(JSON(s)); p != nil {
		t.Fatalf("derived schema outside the subset: %v", p)
	}
}

func TestForRefusesUnknownNames(t *testing.T) {
	type badEnum struct {
		A string `json:"a" schema:"enum=@nope"`
	}
	type badBound struct {
		A string `json:"a" schema:"max=@nope"`
	}
	type badNumber struct {
		A string `json:"a" schema:"max=ten"`
	}
	type badPattern struct {
		A string `json:"a" schema:"pattern=nope"`
	}
	type badItem struct {
		A string `json:"a" schema:"mx=3"`
	}
	for name, f := range map[string]func() (S, error){
		"enum":    func() (S, error) { return For[badEnum](Vocabulary{}) },
		"bound":   func() (S, error) { return For[badBound](Vocabulary{}) },
		"number":  func() (S, error) { return For[badNumber](Vocabulary{}) },
		"pattern": func() (S, error) { return For[badPattern](Vocabulary{}) },
		"item":    func() (S, error) { return For[badItem](Vocabulary{}) },
	} {
		if _, err := f(); err == nil || !strings.Contains(err.Error(), "A") {
			t.Errorf("%s: err = %v, want one naming field A", name, err)
		}
	}
}

// TestForLeavesUnboundedToTheSubsetCheck: a field without bounds derives,
// and CheckSubset (run by registry.New) refuses it.
func TestForLeavesUnboundedToTheSubsetCheck(t *testing.T) {
	type unbounded struct {
		A string `json:"a"`
	}
	s, err := For[unbounded](Vocabulary{})
	if err != nil {
		t.Fatal(err)
	}
	if p := CheckSubset(JSON(s)); len(p) == 0 {
		t.Fatal("an unbounded string passed the subset check")
	}
}
