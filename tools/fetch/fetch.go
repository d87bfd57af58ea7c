// Package fetch holds fetch_content, the only tool that touches the
// network, off by default (fetchContentTool: true): it fetches a page,
// turns it into Markdown without scripts, navigation, ads or cookie
// banners, and can save it to a file instead of showing it.
//
// Invariants:
//   - Only http and https; at most MaxRedirects redirects, each to http or
//     https; at most MaxBytes of body read.
//   - robots.txt is honoured for the agent "mm" (a 4xx robots.txt allows
//     everything, a 5xx or an unreachable one refuses, as the RFC says).
//   - Every failure is one line for the model:
//     [fetch_content: error N (kind) — reason], N = 1 not convertible,
//     2 unreachable, 3 invalid argument.
//   - An empty page is reported, never saved; a save goes through the
//     environment's file view and asks like any write.
package fetch

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/temoto/robotstxt"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/mm-agent/mm/tools"
)

//go:embed fetch.md
var desc string

// Limits of one fetch.
const (
	MaxBytes     = 4 << 20
	MaxRedirects = 5
	Timeout      = 30 * time.Second
	agent        = "mm"
)

// Options configure the tool; zero values are the defaults.
type Options struct {
	// Client is used for every request; nil is a client with Timeout and
	// the redirect bound. A given client gets the redirect bound too.
	Client *http.Client
	// MaxOutput bounds the Markdown returned to the model (not what is
	// saved); 0 is 16,000 characters.
	MaxOutput int
}

type params struct {
	URL    string `json:"url" desc:"the page, e.g. https://example.com/docs"`
	Output string `json:"output,omitempty" desc:"save the Markdown to this file instead of showing it"`
}

// New returns fetch_content.
func New(opts Options) tools.Tool {
	hc := &http.Client{Timeout: Timeout}
	if opts.Client != nil {
		c := *opts.Client
		hc = &c
	}
	// Redirects are followed by run, one at a time: one to another host
	// is asked and checked against robots.txt like a first request.
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = 16000
	}
	f := &fetcher{hc: hc, maxOutput: opts.MaxOutput}
	return tools.New(tools.Spec[params]{
		Name:        "fetch_content",
		Description: strings.TrimSpace(desc),
		Kind:        tools.KindFetch,
		Caps:        tools.Network | tools.WritesWorkspace,
		Describe: func(_ tools.Env, p params) tools.Call {
			if u, err := Repair(p.URL); err == nil {
				p.URL = u
			}
			if p.Output != "" {
				return tools.Call{Title: "Fetch " + p.URL + " → " + p.Output}
			}
			return tools.Call{Title: "Fetch " + p.URL}
		},
		Run: f.run,
	})
}

type fetcher struct {
	hc        *http.Client
	maxOutput int
}

func failure(code int, reason string) tools.Result {
	kind := map[int]string{1: "not convertible", 2: "unreachable", 3: "invalid argument"}[code]
	return tools.Errorf("[fetch_content: error %d (%s) — %s]", code, kind, reason)
}

func (f *fetcher) run(ctx context.Context, env tools.Env, p params) (tools.Result, error) {
	raw := p.URL
	u, err := Repair(raw)
	if err != nil {
		return failure(3, err.Error()), nil
	}
	var out *saving
	if p.Output != "" {
		if out, err = target(ctx, env, p.Output); err != nil {
			return failure(3, err.Error()), nil
		}
	}
	if res, err := f.ask(ctx, env, p, u, "", out); res != nil || err != nil {
		return *orEmpty(res), err
	}
	md, res, err := f.page(ctx, env, p, u, out)
	if res != nil || err != nil {
		return *orEmpty(res), err
	}
	if strings.TrimSpace(md) == "" {
		return failure(1, "the page has no text once scripts, navigation and banners are removed (nothing saved)"), nil
	}
	md = strings.TrimSpace(md) + "\n"
	if out == nil {
		return tools.Result{Text: truncate(md, f.maxOutput)}, nil
	}
	save := out.abs
	if err := tools.WriteIfUnchanged(ctx, env, save, out.rel, out.old, out.existed, []byte(md), 0o644); err != nil {
		var changed *tools.ChangedError
		if errors.As(err, &changed) {
			env.Reads().Forget(save)
		}
		return tools.Errorf("[fetch_content: fetched but not saved — %v]", err), nil
	}
	env.Reads().Record(save, []byte(md))
	n := strings.Count(md, "\n")
	return tools.Result{
		Text:      fmt.Sprintf("[fetch_content: saved %d lines to %s — the content is not shown]", n, tools.Rel(env, save)),
		Locations: []tools.Location{{Path: save}},
	}, nil
}

// saving is the file a fetch saves to, checked as write_file checks its
// file: inside the workspace, and read first when it exists.
type saving struct {
	abs, rel string
	old      []byte
	existed  bool
}

func target(ctx context.Context, env tools.Env, path string) (*saving, error) {
	abs, err := tools.Resolve(env, path)
	if err != nil {
		return nil, err
	}
	s := &saving{abs: abs, rel: tools.Rel(env, abs)}
	cur, err := env.ReadFile(ctx, abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("cannot read %s: %v", s.rel, err)
	}
	if r := env.Reads().Check(abs, path, cur); r != "" {
		return nil, errors.New(strings.Trim(r, "[]"))
	}
	s.old, s.existed = cur, true
	return s, nil
}

// ask asks for a request to u — the first, or a redirect from another
// host (from) — and checks u's robots.txt once allowed. A result (or an
// error) means the request must not go out. A fetch is a network request
// first; one that saves also writes, and asks as both.
func (f *fetcher) ask(ctx context.Context, env tools.Env, p params, u, from string, out *saving) (*tools.Result, error) {
	kind, caps, title := tools.KindFetch, tools.Network, "Fetch "+u
	if from != "" {
		title += " (redirected from " + from + ")"
	}
	// The file it saves to is named, as a write tool names its file, so
	// the Policy's rule for files that run later applies: saving a page
	// as .envrc or .git/hooks/pre-commit is asked in every mode, and an
	// "always" answer for the host does not cover it.
	var locs []tools.Location
	if out != nil {
		caps, title = caps|tools.WritesWorkspace, title+" and save it to "+out.rel
		locs = []tools.Location{{Path: out.abs}}
	}
	host := ""
	if pu, err := url.Parse(u); err == nil {
		host = pu.Host
	}
	d, err := env.Approve(ctx, tools.Approval{Tool: "fetch_content", Kind: kind, Caps: caps, Title: title, Key: host, Subject: u, Locations: locs, Input: p})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("ask approval for fetch_content: %w", err)
	}
	if !d.Allowed {
		r := tools.Errorf("[fetch_content: not fetched — %s]", d.Reason)
		if from != "" {
			r = tools.Errorf("[fetch_content: not fetched — %s redirects to %s, and %s]", from, u, d.Reason)
		}
		return &r, nil
	}
	if reason := f.robots(ctx, u); reason != "" {
		r := failure(2, reason)
		return &r, nil
	}
	return nil, nil
}

func orEmpty(r *tools.Result) *tools.Result {
	if r == nil {
		return &tools.Result{}
	}
	return r
}

var (
	schemeTypo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?i)(https?)(:/|//|:)/*`) })
	hostLike   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[\p{L}\p{N}.-]+\.[\p{L}]{2,}(:\d+)?([/?#]|$)|^(localhost|\d+\.\d+\.\d+\.\d+)(:\d+)?([/?#]|$)`)
	})
)

// Repair fixes the URLs small models write: surrounding quotes or
// brackets, a missing scheme (k33g.org → https://k33g.org), a scheme
// without its colon or with one slash (https//x, https:/x → https://x).
// Anything that is not then an http(s) URL with a host is an error that
// says why.
func Repair(raw string) (string, error) {
	s := strings.Trim(strings.TrimSpace(raw), "\"'<>`")
	if s == "" {
		return "", errors.New(`"url" is empty — give the page's address, e.g. https://example.com`)
	}
	if m := schemeTypo().FindStringSubmatch(s); m != nil {
		s = strings.ToLower(m[1]) + "://" + s[len(m[0]):]
	} else if strings.HasPrefix(s, "//") {
		s = "https:" + s
	} else if !strings.Contains(s, "://") && hostLike().MatchString(s) {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%q is not a URL: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("only http and https pages can be fetched, not %q", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%q has no host name", raw)
	}
	return u.String(), nil
}

// robots returns why robots.txt forbids u, "" when it allows it.
func (f *fetcher) robots(ctx context.Context, u string) string {
	pu, _ := url.Parse(u)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pu.Scheme+"://"+pu.Host+"/robots.txt", nil)
	if err != nil {
		return err.Error()
	}
	req.Header.Set("User-Agent", agent)
	resp, err := f.hc.Do(req)
	if err != nil {
		return "robots.txt could not be read: " + shortErr(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512<<10))
	rd, err := robotstxt.FromStatusAndBytes(resp.StatusCode, body)
	if err != nil {
		return "" // an unreadable robots.txt forbids nothing
	}
	path := pu.EscapedPath()
	if pu.RawQuery != "" {
		path += "?" + pu.RawQuery
	}
	if path == "" {
		path = "/"
	}
	if !rd.TestAgent(path, agent) {
		return "the site's robots.txt does not allow fetching " + path
	}
	return ""
}

// page fetches u and converts it; the Result is set on failure, the
// error when a question could not be asked. Redirects are followed here,
// at most MaxRedirects, to http and https only; one to another host is
// asked and checked like a first request.
func (f *fetcher) page(ctx context.Context, env tools.Env, p params, u string, out *saving) (string, *tools.Result, error) {
	fail := func(code int, reason string) (string, *tools.Result, error) {
		r := failure(code, reason)
		return "", &r, nil
	}
	var resp *http.Response
	for hops := 0; ; hops++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return fail(3, err.Error())
		}
		req.Header.Set("User-Agent", agent)
		req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,text/markdown;q=0.9")
		resp, err = f.hc.Do(req)
		if err != nil {
			return fail(2, shortErr(err))
		}
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
			break
		}
		resp.Body.Close()
		next, err := req.URL.Parse(loc)
		switch {
		case err != nil:
			return fail(2, "the server redirects to an invalid address: "+err.Error())
		case hops+1 > MaxRedirects:
			return fail(2, fmt.Sprintf("more than %d redirects", MaxRedirects))
		case next.Scheme != "http" && next.Scheme != "https":
			return fail(2, "redirected to a "+next.Scheme+": URL")
		}
		if next.Host != req.URL.Host {
			if res, err := f.ask(ctx, env, p, next.String(), u, out); res != nil || err != nil {
				return "", res, err
			}
		}
		u = next.String()
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fail(2, fmt.Sprintf("the server answered HTTP %d", resp.StatusCode))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBytes+1))
	if err != nil {
		return fail(2, "the page was cut off: "+shortErr(err))
	}
	if len(body) > MaxBytes {
		return fail(1, fmt.Sprintf("the page is larger than %d MiB", MaxBytes>>20))
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ct == "" || ct == "text/html" || ct == "application/xhtml+xml":
		md, err := Markdown(body, resp.Request.URL)
		if err != nil {
			return fail(1, err.Error())
		}
		return md, nil, nil
	case strings.HasPrefix(ct, "text/") || ct == "application/json":
		return string(body), nil, nil
	}
	return fail(1, fmt.Sprintf("the page is %s, not HTML or text", ct))
}

// Markdown turns an HTML page into Markdown: the <main> or <article> when
// the page has one, without scripts, styles, navigation, forms, ads and
// cookie or consent banners; links made absolute against base.
func Markdown(page []byte, base *url.URL) (string, error) {
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		return "", fmt.Errorf("the HTML cannot be read: %v", err)
	}
	strip(doc)
	root := doc
	if m := find(doc, atom.Main); m != nil {
		root = m
	} else if a := find(doc, atom.Article); a != nil {
		root = a
	}
	var opts []converter.ConvertOptionFunc
	if base != nil {
		opts = append(opts, converter.WithDomain(base.Scheme+"://"+base.Host))
	}
	md, err := htmltomarkdown.ConvertNode(root, opts...)
	if err != nil {
		return "", fmt.Errorf("the HTML cannot be converted: %v", err)
	}
	return string(md), nil
}

// dropTags never carry the page's content.
var dropTags = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Nav: true, atom.Aside: true, atom.Footer: true, atom.Form: true,
	atom.Iframe: true, atom.Svg: true, atom.Button: true, atom.Dialog: true,
}

// clutter matches the ids, classes, roles and labels of banners, menus and
// ads.
var clutter = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(^|[\s_-])(cookies?|consent|gdpr|banner|ads?|advert\w*|sponsor\w*|promo\w*|newsletter|popup|modal|sidebar|menu|navbar|breadcrumbs?|share|social|subscribe)($|[\s_-])`)
})

func strip(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.CommentNode || (c.Type == html.ElementNode && (dropTags[c.DataAtom] || isClutter(c))) {
			n.RemoveChild(c)
		} else {
			strip(c)
		}
		c = next
	}
}

func isClutter(n *html.Node) bool {
	if n.DataAtom == atom.Body || n.DataAtom == atom.Html || n.DataAtom == atom.Main || n.DataAtom == atom.Article {
		return false
	}
	for _, a := range n.Attr {
		switch a.Key {
		case "id", "class", "aria-label":
			if clutter().MatchString(a.Val) {
				return true
			}
		case "role":
			switch a.Val {
			case "navigation", "banner", "contentinfo", "complementary", "dialog", "alertdialog":
				return true
			}
		case "hidden", "aria-hidden":
			if a.Key == "hidden" || a.Val == "true" {
				return true
			}
		}
	}
	return false
}

func find(n *html.Node, a atom.Atom) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, a); f != nil {
			return f
		}
	}
	return nil
}

func shortErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// truncate keeps the head and the tail of a long page, with a line that
// says how to get the rest.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := max*3/4, max/4
	for head > 0 && !utf8Start(s[head]) {
		head--
	}
	t := len(s) - tail
	for t < len(s) && !utf8Start(s[t]) {
		t++
	}
	return s[:head] + fmt.Sprintf("\n[… %d characters cut: use output to save the whole page, then read it in parts …]\n", t-head) + s[t:]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
