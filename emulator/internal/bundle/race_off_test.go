//go:build !race

package bundle

const raceBuild = false
