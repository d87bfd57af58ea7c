package main

import (
	"fmt"

	"example.com/query/greet"
)

func main() {
	fmt.Println(greet.Hello("world"))
	fmt.Println(greet.Hello("gopher"))
}
