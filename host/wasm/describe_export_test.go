package wasm

// DescribeWith is Describe with the guest's run limit given and a hook called
// between the compilation and the guest's first instruction.
var DescribeWith = describe
