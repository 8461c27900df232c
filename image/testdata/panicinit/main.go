// Command panicinit is the update test's other broken update: a PID 1 that
// panics at once, so the kernel panics and reboots (panic=10).
package main

func main() { panic("panicinit: a broken PID 1, for the update test") }
