package main

import _ "modernc.org/sqlite"

func main() {}
