// bonesync's armcrypto overlay: added to the appliance's main package in
// the board's build (see armcrypto/main.go). Not compiled on its own.

package main

func init() { armcryptoBuilt = true }
