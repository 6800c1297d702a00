module streamer

go 1.26.0

require (
	github.com/hashicorp/golang-lru/v2 v2.0.7
	github.com/spf13/cobra v1.10.2
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
)
