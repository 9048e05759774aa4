package main

import _ "github.com/blevesearch/bleve/v2"

func main() {}
