module github.com/copilot-ide/sessionlocks

go 1.26.8

require (
	github.com/bahlo/generic-list-go v0.2.0 // indirect
	github.com/buger/jsonparser v1.1.2 // indirect
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/invopop/jsonschema v0.14.0 // indirect
	github.com/mattn/go-runewidth v0.0.31 // indirect
	github.com/pb33f/ordered-map/v2 v2.3.1 // indirect
	github.com/peterh/liner v1.2.3 // indirect
	github.com/shirou/gopsutil/v4 v4.26.10 // indirect
	github.com/sourcegraph/jsonrpc2 v0.2.3 // indirect
	go.yaml.in/yaml/v4 v4.0.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
