// Command mcpserver runs mcptest's server on stdio for the tests;
// -malformed runs the malformed one; -fail exits at once after a line on
// stderr, as a server missing its configuration does.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mm-agent/mm/tools/mcp/mcptest"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "-fail":
			fmt.Fprintln(os.Stderr, "mcpserver: GREETER_TOKEN is not set")
			os.Exit(2)
		case "-malformed":
			mcptest.Malformed(os.Stdin, os.Stdout)
			return
		}
	}
	if err := mcptest.Server().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
