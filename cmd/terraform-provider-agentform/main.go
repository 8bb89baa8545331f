// Command terraform-provider-agentform serves agentform's Terraform
// provider (DESIGN §13) over plugin protocol 6. Terraform starts it; run it
// by hand with -debug to attach a debugger and point Terraform at it with
// the TF_REATTACH_PROVIDERS value it prints.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/agentform/agentform/internal/version"
	"github.com/agentform/agentform/provider"
)

func main() {
	debug := flag.Bool("debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version.Version), providerserver.ServeOpts{
		Address: provider.Address,
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
