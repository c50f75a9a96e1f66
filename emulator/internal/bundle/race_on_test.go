//go:build race

package bundle

// raceBuild says the tests run under the race detector (-race), which inflates ten or
// twenty times slower: the large texts' tests then try fewer cases.
const raceBuild = true
