package mcpwire

import (
	"slices"
	"strings"
	"testing"
)

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want []string
	}{
		{name: "empty", text: " \n\t\n", want: nil},
		{name: "short, as written", text: "\nboom\nexit\n", want: []string{"boom", "exit"}},
		{
			name: "the last lines of plain output",
			text: "l1\nl2\nl3\nl4\nl5",
			want: []string{"l3", "l4", "l5"},
		},
		{
			// node 20, uncaught: the error, ten frames, the version.
			name: "node keeps its error",
			text: `/srv/server.js:2
function f(){ throw new Error("cannot open config"); }
              ^

Error: cannot open config
    at f (/srv/server.js:2:21)
    at Object.<anonymous> (/srv/server.js:3:1)
    at Module._compile (node:internal/modules/cjs/loader:1521:14)
    at Module._extensions..js (node:internal/modules/cjs/loader:1623:10)
    at Module.load (node:internal/modules/cjs/loader:1266:32)
    at Module._load (node:internal/modules/cjs/loader:1091:12)
    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)
    at node:internal/main/run_main_module:28:49

Node.js v20.20.2
`,
			want: []string{
				"",
				"Error: cannot open config",
				"    at f (/srv/server.js:2:21)",
				"    … 7 more frames",
				"",
				"Node.js v20.20.2",
			},
		},
		{
			name: "one frame is not counted",
			text: "Error: x\n    at f (a.js:1:1)\ndone",
			want: []string{"Error: x", "    at f (a.js:1:1)", "done"},
		},
		{
			name: "Go keeps its panic",
			text: `panic: open /etc/server.json: permission denied

goroutine 1 [running]:
main.load(...)
	/src/main.go:12
main.setup()
	/src/main.go:20 +0x1d
main.main()
	/src/main.go:30 +0x25
`,
			want: []string{
				"panic: open /etc/server.json: permission denied",
				"",
				"goroutine 1 [running]:",
				"main.load(...)",
				"\t/src/main.go:12",
				"\t… 4 more lines",
			},
		},
		{
			name: "Python's error comes last already",
			text: `Traceback (most recent call last):
  File "/srv/s.py", line 3, in <module>
    f()
  File "/srv/s.py", line 2, in f
    def f(): raise RuntimeError("cannot open config")
RuntimeError: cannot open config`,
			want: []string{
				`  File "/srv/s.py", line 2, in f`,
				`    def f(): raise RuntimeError("cannot open config")`,
				"RuntimeError: cannot open config",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 3
			switch tc.name {
			case "node keeps its error", "Go keeps its panic":
				n = 6
			}
			got := LastLines(tc.text, n)
			if !slices.Equal(got, tc.want) {
				t.Errorf("LastLines(%d)\ngot:  %q\nwant: %q", n, got, tc.want)
			}
		})
	}
}

// A node crash of ten frames leaves its error among the last ten lines.
func TestLastLinesNodeError(t *testing.T) {
	frames := strings.Repeat("    at x (node:internal/y:1:1)\n", 10)
	text := "/srv/a.js:1\nthrow e\n^\n\nError: the real cause\n" + frames + "\nNode.js v20.20.2\n"
	if got := LastLines(text, 10); !slices.Contains(got, "Error: the real cause") {
		t.Errorf("LastLines\ngot:  %q\nwant: the error among them", got)
	}
}
