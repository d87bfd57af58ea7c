package shell

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
		// Found only by a parser: every place bash runs a command.
		"echo ok && (rm -rf /)",
		"x=$(rm -rf ~)",
		"cat <<EOF\n$(rm -rf /)\nEOF",
		`bash -c "eval 'rm -rf /'"`,
		`sh -c "rm -rf \$HOME"`,
		`bash -c $'ls\nrm -rf ~'`,
		`bash -c 'ls; if'`, // bash runs ls, then fails: a script that does not parse is refused
		`r\m -rf /`,
		`"rm" -rf /`,
		"if true; then rm -rf /; fi",
		"for i in 1; do sudo rm -rf /usr; done",
		"while false; do :; done; until true; do rm -rf ~; done",
		"ls | xargs rm -rf /",
		"time rm -rf /",
		"! rm -rf /",
		"{ rm -rf /; }",
		`echo "$(rm -rf /)"`,
		"echo `rm -rf /`",
		"diff <(rm -rf /) x",
		"declare x=$(rm -rf /)",
		"[[ -n $(rm -rf /) ]]",
		"f() { rm -rf /; }; f",
		"(cat img) > /dev/sda",
		"case x in x) rm -rf /;; esac",
		"f(){ f | f; }; f",
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
		"cat <<'EOF'\n$(rm -rf /)\nEOF",
		"echo '$(rm -rf /)'",
		"git log --grep='rm -rf /'",
		"printf '%s\\n' 'shutdown now'",
		`python3 -c 'print("rm -rf /")'`,
		"bash -c 'rm -rf ./build'",
		"f(){ g | h; }; f",
	}
	for _, c := range allowed {
		if why := catastrophic(c, home, 0); why != "" {
			t.Errorf("refused %q: %s", c, why)
		}
	}
}

func TestRefusalText(t *testing.T) {
	if got := Refusal("echo 'unterminated", ""); !strings.HasPrefix(got, "[refused: bash cannot parse this command line") {
		t.Errorf("unparsable: %q", got)
	}
	got := Refusal("rm -rf /", "")
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
		{"sleep 1 & sleep 2 &", "sleep 1 & nohup sleep 2 > sleep.log 2>&1 &"},
		{"if true; then server; fi &", "nohup cmd > cmd.log 2>&1 &"},
		{"a > a.log && b &", "a > a.log && nohup b > b.log 2>&1 &"},
		{"sudo -u www ./srv &", "nohup sudo -u www ./srv > srv.log 2>&1 &"},
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
		"server > log 2>&1 & # started",
		"(a && b) > ab.log &",
		"cat > run.sh <<'EOF'\nserver &\nEOF",
		"",
	}
	for _, c := range allowed {
		if got := bareBackground(c); got != "" {
			t.Errorf("%q refused: %q", c, got)
		}
	}
}

func TestCommands(t *testing.T) {
	line := `a 'b c' "d \"e\" $f" g\ h 2>&1 >>x | y && z # c` + "\n" + `cat <<-EOF` + "\n\tbody &\n\tEOF\nw $(v ${u}) <(s)"
	f, err := parse(line)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, c := range commands(line, f) {
		s := strings.Join(c.words, "|")
		for _, r := range c.redirs {
			s += " <" + r.op + r.target + ">"
		}
		parts = append(parts, s)
	}
	want := `a|b c|d "e" $f|g h <2>&1> <>>x>; y; z; cat <<<-EOF>; w|$(v ${u})|<(s); v|${u}; s`
	if g := strings.Join(parts, "; "); g != want {
		t.Errorf("commands:\n got %s\nwant %s", g, want)
	}
}
