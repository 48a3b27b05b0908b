package whitelist_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcpbridge/mcpbridge/whitelist"
)

func Example() {
	doc, err := openapi3.NewLoader().LoadFromFile("../testdata/specs/petstore.3.0.yaml")
	if err != nil {
		log.Fatal(err)
	}
	policy, err := whitelist.Parse(strings.NewReader(`
tools:
  - method: GET
    path: /pet/:id
    name: get_pet
  - tag: store
    timeout: 5s
`))
	if err != nil {
		log.Fatal(err)
	}
	ops, err := policy.Select(doc)
	if err != nil {
		log.Fatal(err)
	}
	for _, op := range ops {
		fmt.Printf("%-6s %-24s %-13s name=%q timeout=%s\n", op.Method, op.Path, op.Op.OperationID, op.Name, op.Timeout)
	}
	// Output:
	// GET    /pet/{petId}             getPetById    name="get_pet" timeout=0s
	// GET    /store/inventory         getInventory  name="" timeout=5s
	// POST   /store/order             placeOrder    name="" timeout=5s
	// GET    /store/order/{orderId}   getOrderById  name="" timeout=5s
	// DELETE /store/order/{orderId}   deleteOrder   name="" timeout=5s
}

func ExamplePolicy_Select_errors() {
	doc, err := openapi3.NewLoader().LoadFromFile("../testdata/specs/petstore.3.0.yaml")
	if err != nil {
		log.Fatal(err)
	}
	policy, err := whitelist.Parse(strings.NewReader(`
tools:
  - operationId: getPetByID
  - operationId: getInventory
  - {method: GET, path: /store/inventory}
`))
	if err != nil {
		log.Fatal(err)
	}
	_, err = policy.Select(doc)
	fmt.Println(err)
	// Output:
	// line 3: operationId "getPetByID" matches no operation; did you mean "getPetById" or "getOrderById"?
	// line 5: GET /store/inventory already selected by the entry at line 4 (each operation may be listed once)
}
