package sessionlocks

import (
	"strings"
	"testing"
)

func TestIsCopilot(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want bool
	}{
		{"npm native, linux", []string{"/usr/lib/node_modules/@github/copilot-linux-x64/copilot", "--resume=abc"}, true},
		{"npm native, macOS", []string{"/opt/homebrew/lib/node_modules/@github/copilot-darwin-arm64/copilot"}, true},
		{"npm native, musl", []string{"/x/node_modules/@github/copilot-linux-x64-musl/copilot", "-p", "hi"}, true},
		{"npm native, Windows", []string{`C:\Users\me\AppData\Roaming\npm\node_modules\@github\copilot-win32-x64\copilot.exe`, "-p", "hi"}, true},
		{"Homebrew cask", []string{"/opt/homebrew/Caskroom/copilot-cli/1.0.45/copilot"}, true},
		{"WinGet", []string{`C:\Users\me\AppData\Local\Microsoft\WinGet\Packages\GitHub.Copilot_Microsoft.Winget.Source_8wekyb3d8bbwe\copilot.exe`}, true},
		{"npm loader", []string{"node", "/usr/lib/node_modules/@github/copilot/npm-loader.js", "--resume"}, true},
		{"node with an option", []string{"/usr/bin/node", "--no-warnings", "/x/@github/copilot/index.js"}, true},
		{"node with an option the table does not know", []string{"node", "-W", "ignore", "/x/@github/copilot/index.js"}, true},
		{"node with a value option", []string{"node", "--require", "/tmp/hook.js", "/x/@github/copilot/index.js"}, true},
		{"nodejs", []string{"/usr/bin/nodejs", "/usr/lib/node_modules/@github/copilot/index.js"}, true},
		{"node20", []string{"/usr/bin/node20", "/usr/lib/node_modules/@github/copilot/index.js"}, true},
		{"node-22", []string{"node-22", "/x/@github/copilot/npm-loader.js"}, true},
		{"nvm's node", []string{"/home/me/.nvm/versions/node/v22.1.0/bin/node", "/home/me/.nvm/versions/node/v22.1.0/lib/node_modules/@github/copilot/npm-loader.js"}, true},
		{"node.exe", []string{`C:\Program Files\nodejs\node.exe`, `C:\Users\me\AppData\Roaming\npm\node_modules\@github\copilot\npm-loader.js`}, true},
		{"bun", []string{"bun", "/x/@github/copilot/index.js"}, true},
		{"deno run", []string{"deno", "run", "-A", "/x/@github/copilot/index.js"}, true},
		{"agency", []string{"agency", "copilot", "--resume"}, true},
		{"argv rewritten into one string", []string{"/usr/lib/node_modules/@github/copilot-linux-x64/copilot --resume=x"}, true},

		{"a bare name, nothing else known", []string{"copilot"}, false},
		{"AWS copilot", []string{"/usr/local/bin/copilot", "svc", "deploy"}, false},
		{"copilot in some directory", []string{"/opt/copilot/copilot", "--resume=x"}, false},
		{"a copilot.exe anywhere", []string{`C:\Users\me\AppData\copilot.exe`, "-p", "hi"}, false},
		{"the language server, node", []string{"node", "/x/@github/copilot-language-server/dist/language-server.js", "--stdio"}, false},
		{"the language server, native", []string{"/x/@github/copilot-language-server-linux-x64/copilot-language-server"}, false},
		{"node running another script first", []string{"node", "server.js", "/x/@github/copilot/index.js"}, false},
		{"nodemon is not node", []string{"nodemon", "/x/@github/copilot/index.js"}, false},
		{"comm", []string{"MainThread"}, false},
		{"an argument named copilot", []string{"/usr/bin/sleep", "copilot"}, false},
		{"node with an argument named copilot", []string{"node", "server.js", "copilot"}, false},
		{"electron", []string{"/home/me/copilot-ide/bin/electron"}, false},
		{"vim", []string{"vim", "copilot"}, false},
		{"nothing", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isCopilot(tt.argv, 0); got != tt.want {
				t.Errorf("isCopilot(%q) = %v, want %v", strings.Join(tt.argv, " "), got, tt.want)
			}
		})
	}
}
