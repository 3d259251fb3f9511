module github.com/copilot-ide/sessionlocks

go 1.26.8

require (
	github.com/ebitengine/purego v0.11.2
	github.com/fsnotify/fsnotify v1.10.1
	github.com/invopop/jsonschema v0.14.0
	github.com/peterh/liner v1.2.3
	github.com/shirou/gopsutil/v4 v4.26.10
	github.com/sourcegraph/jsonrpc2 v0.2.3
	go.yaml.in/yaml/v4 v4.0.0
	golang.org/x/sys v0.49.0
	// x/tools only for golang.org/x/tools/txtar, the standard parser of the
	// rpc transcript tests' golden files (testdata/rpc/*.txtar); test-only.
	golang.org/x/tools v0.52.0
)

require (
	github.com/bahlo/generic-list-go v0.2.0 // indirect
	github.com/buger/jsonparser v1.1.2 // indirect
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/go-ole/go-ole v1.2.6 // indirect
	github.com/lufia/plan9stats v0.0.0-20211012122336-39d0f177ccd0 // indirect
	github.com/mattn/go-runewidth v0.0.31 // indirect
	github.com/pb33f/ordered-map/v2 v2.3.1 // indirect
	github.com/power-devops/perfstat v0.0.0-20260805114148-88456608a4f6 // indirect
	github.com/tklauser/go-sysconf v0.4.0 // indirect
	github.com/tklauser/numcpus v0.12.0 // indirect
	github.com/yusufpapurcu/wmi v1.2.4 // indirect
)
