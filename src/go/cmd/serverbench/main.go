// Command serverbench is the Go native benchmark program (docs/spec.md).
package main

import (
	"os"

	"serverbench/internal/app"
)

func main() {
	// os.Exit also ends the spawn benchmark's goroutines, which block forever.
	os.Exit(app.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
