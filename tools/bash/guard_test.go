package bash

import (
	"strings"
	"testing"
)

func TestCatastrophic(t *testing.T) {
	const home = "/home/ann"
	refused := []string{
		"rm -rf /",
		"rm -rf /*",
		"rm -rf ~",
		"rm -rf ~/",
		"rm -rf ~/*",
		"rm -rf $HOME",
		`rm -rf "${HOME}/"`,
		"rm -rf /home/ann",
		"rm -fr /",
		"rm -r -f /",
		"rm --recursive --force --no-preserve-root /",
		"rm -rf -- /",
		"sudo rm -rf /",
		"sudo -u root rm -rf /usr",
		"/bin/rm -Rf /etc/",
		"cd /tmp && rm -rf /",
		"echo hi; rm -rf /",
		"true && FOO=1 rm -rf /",
		"echo $(rm -rf /)",
		"bash -c 'rm -rf /'",
		`sh -ec "rm -rf ~"`,
		"eval rm -rf /",
		"chmod -R 777 /",
		"chown -R me /",
		"mkfs.ext4 /dev/sda1",
		"mkfs -t ext4 /dev/nvme0n1p1",
		"sudo wipefs -a /dev/sdb",
		"dd if=/dev/zero of=/dev/sda bs=1M",
		"dd if=img.iso of=/dev/nvme0n1",
		"cat img > /dev/sda",
		":(){ :|:& };:",
		":() { : | : & }; :",
		"bomb(){ bomb|bomb& }; bomb",
		"function f { f | f & }; f",
		"shutdown -h now",
		"sudo reboot",
		"halt",
		"poweroff",
		"init 0",
		"systemctl reboot",
		"sleep 5; shutdown now",
	}
	for _, c := range refused {
		if why := catastrophic(c, home, 0); why == "" {
			t.Errorf("not refused: %q", c)
		}
	}
	allowed := []string{
		"rm -rf ./build",
		"rm -rf build/ dist/",
		"rm -rf /tmp/mm-test",
		"rm -rf /tmp/*",
		"rm -rf ~/project/node_modules",
		"rm -rf /home/ann/project/out",
		"rm -f /etc/foo.conf.bak", // not recursive
		"rm /",                    // not recursive: rm refuses it anyway
		"echo 'rm -rf /'",
		`grep -r "rm -rf /" .`,
		"git commit -m 'never run rm -rf / or shutdown'",
		"# rm -rf /\nls",
		"cat > notes.md <<'EOF'\nrm -rf /\nshutdown now\nEOF\nwc -l notes.md",
		"dd if=/dev/zero of=/dev/null count=1",
		"dd if=/dev/zero of=disk.img bs=1M count=10",
		"ls > /dev/null",
		"chmod -R u+w ./src",
		"chmod 755 /",
		"go test ./... 2>&1 | tail -20",
		"docker compose down",
		"echo init 0",
		"systemctl status nginx",
		"f(){ echo hi; }; f",
		"a | b & c",
	}
	for _, c := range allowed {
		if why := catastrophic(c, home, 0); why != "" {
			t.Errorf("refused %q: %s", c, why)
		}
	}
}

func TestRefusalText(t *testing.T) {
	got := refusal("rm -rf /", "")
	if !strings.HasPrefix(got, "[refused: `rm -rf /` would wipe /") || !strings.Contains(got, "mm never runs this") {
		t.Errorf("got %q", got)
	}
}

func TestBareBackground(t *testing.T) {
	cases := []struct{ cmd, fix string }{
		{"sleep 100 &", "nohup sleep 100 > sleep.log 2>&1 &"},
		{"npm run dev &\n", "nohup npm run dev > npm.log 2>&1 &"},
		{"cd web && npm start &", "cd web && nohup npm start > npm.log 2>&1 &"},
		{"go build ./... && ./server --port 8080 &", "go build ./... && nohup ./server --port 8080 > server.log 2>&1 &"},
		{"nohup python3 -m http.server &", "nohup python3 -m http.server > python3.log 2>&1 &"},
		{"PORT=3000 node app.js &", "nohup PORT=3000 node app.js > node.log 2>&1 &"},
		{"python app.py 2> err.log &", "nohup python app.py 2> err.log > python.log 2>&1 &"},
		{"./serve > out.log | cat &", "nohup ./serve > out.log | cat > serve.log 2>&1 &"},
		{"server 1>&2 &", "nohup server 1>&2 > server.log 2>&1 &"},
		{"(cd web; npm start) &", "nohup cmd > cmd.log 2>&1 &"},
		{"ls; sleep 9 &", "ls; nohup sleep 9 > sleep.log 2>&1 &"},
	}
	for _, c := range cases {
		got := bareBackground(c.cmd)
		if !strings.HasPrefix(got, "[refused: ") || !strings.Contains(got, "\n"+c.fix+"\n") {
			t.Errorf("%q:\n got %q\nwant fix %q", c.cmd, got, c.fix)
		}
	}
	allowed := []string{
		"nohup npm run dev > dev.log 2>&1 &",
		"server > log &",
		"server >> log 2>&1 &",
		"server &> log &",
		"server &>>log &",
		"server >/dev/null 2>&1 &",
		"server >& log &",
		"(cd web; npm start) > web.log 2>&1 &",
		"{ a; b; } > ab.log 2>&1 &",
		"a | b > b.log &",
		"sleep 5 & wait",
		"a && b",
		"echo 'run it with &'",
		"echo done # &",
		"cat > run.sh <<'EOF'\nserver &\nEOF",
		"",
	}
	for _, c := range allowed {
		if got := bareBackground(c); got != "" {
			t.Errorf("%q refused: %q", c, got)
		}
	}
}

func TestApprovalKey(t *testing.T) {
	cases := map[string]string{
		"ls -la":                             "ls",
		"git status":                         "git status",
		"git status --short":                 "git status",
		"  go test ./... 2>&1 | tail -20\n":  "go test",
		"cd web && npm run build":            "npm run",
		"make":                               "make",
		"make test":                          "make test",
		"cargo build --release | grep error": "cargo build",
		"pytest -x -q":                       "pytest",
		"go test ./... > /dev/null":          "go test",
		"git -C /x push":                     "git -C /x push",
		"go test ./... && rm -rf out":        "go test ./... && rm -rf out",
		"ls; rm x":                           "ls; rm x",
		"echo $(rm x)":                       "echo $(rm x)",
		`echo "$(rm x)"`:                     `echo "$(rm x)"`,
		"echo hi > ~/.bashrc":                "echo hi > ~/.bashrc",
		"ls | sh":                            "ls | sh",
		"LD_PRELOAD=x.so ls":                 "LD_PRELOAD=x.so ls",
		"npm start &":                        "npm start &",
		"ls\nrm x":                           "ls\nrm x",
	}
	for in, want := range cases {
		if got := approvalKey(in); got != want {
			t.Errorf("approvalKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLex(t *testing.T) {
	got := lex(`a 'b c' "d \"e\" $f" g\ h 2>&1 >>x | y && z # c` + "\n" + `cat <<-EOF` + "\n\tbody &\n\tEOF\nw")
	var parts []string
	for _, tk := range got {
		s := tk.text
		if tk.op {
			s = "<" + strings.ReplaceAll(s, "\n", `\n`) + ">"
		}
		parts = append(parts, s)
	}
	want := `a|b c|d "e" $f|g h|<2>&>|1|<>>>|x|<|>|y|<&&>|z|<\n>|cat|<<<->|EOF|<\n>|w`
	if g := strings.Join(parts, "|"); g != want {
		t.Errorf("lex:\n got %s\nwant %s", g, want)
	}
}
