#!/usr/bin/env python3
"""Check the generated Doxygen site for damage a reader would see.

    check_docs_html.py BUILD/docs/html
    check_docs_html.py --self-test     (a small site with one defect per page: each is found)

Fails (exit 1, one line per problem with the page and the text around it) on:
  * a raw HTML tag shown as text, e.g. "&lt;tt&gt;" in a title, a heading or the page list
    (Doxygen escapes the tags it makes from `code` in headings and in "quoted" text);
  * an en dash where the source had "--" in code: "&ndash;seed" glued to a word, the sign of a
    code span that Doxygen did not recognise (it then also leaves a stray backtick);
  * a stray backtick in rendered prose (outside code and listings), or a Doxygen escape
    such as "\-" shown as text;
  * a dead local link or image: a file that is not in the site, or an #anchor that the
    target page does not define; and links into the source tree (e.g. "../../x.md"), which
    do not exist in the site;
  * raw Markdown shown as text: "**" of a bold Doxygen did not take, or "[text](path)" of a
    link it did not make;
  * a wide figure left at its own size: an image more than 1000 px wide with neither a
    width of its own nor a stylesheet of the page that caps images at the text width
    (max-width: 100%), so it runs off a normal window;
  * a path of the machine that made a file (/root/..., /home/..., /work/...), in prose, in
    code, or in the text a figure carries (the PNG's tEXt chunks: tools/plot_timeline.py
    puts its footer there), e.g. a --timeline= folder copied from a run's command;
  * a figure path shown as code without a link (`docs/.../x.png` the reader cannot open);
  * a page named after a chapter ("ch00_gpu_ceiling"): the Markdown file has no title line,
    so Doxygen titled it with its first section.
Source listings (*_source.html) are skipped: there, "<" and backticks are the code itself.
"""
import html.parser
import os
import re
import sys
from urllib.parse import unquote, urlsplit

RAW_TAG = re.compile(r"&lt;/?(tt|code|b|i|em|strong|a|br|p|pre|sup|sub|kbd|span|div|img|ul|li|"
                     r"table|tr|td|th|h[1-6])(\s[^&]*)?/?&gt;", re.I)
DASH_IN_CODE = re.compile(r"(^|[\s>(\[])(?:&ndash;|\u2013)(?=[A-Za-z])")
RAW_BOLD = re.compile(r"\*\*")
RAW_LINK = re.compile(r"\[[^\]\n]+\]\([^)\s]+\)")
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:root|home|work|Users|scratch|mnt)/[^\s\"'<>)]*")
FIGURE_PATH = re.compile(r"\.(png|svg|jpe?g|gif)$", re.I)
WIDE_PX = 1000
SCALED_BY_CSS = re.compile(r"img[^{}]*\{[^}]*max-width\s*:\s*100%", re.I)
PAGE_NAMED_AFTER_A_CHAPTER = re.compile(r"^ch\d\d_[a-z0-9_]+$")
# pages Doxygen makes from the code (C++ declarations hold "char **argv"), not from Markdown
CODE_PAGE = re.compile(r"^(namespace|class|struct|union|dir_|files|globals|functions|annotated|"
                       r"hierarchy)|_8[a-z]+\.html$")


class Page(html.parser.HTMLParser):
    """Collects ids, links, images and the prose text (outside code and listings)."""

    SKIP = {"code", "pre", "tt", "script", "style", "kbd"}

    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.ids = set()
        self.refs = []  # (kind, url)
        self.prose = []  # text chunks outside code
        self.skip_depth = 0
        self.fragment_depth = 0
        self.div_stack = []
        self.all_text = []  # every text chunk, code included (for machine paths)
        self.images = []  # (src, attrs) of every <img>
        self.stylesheets = []  # hrefs of <link rel="stylesheet">
        self.link_depth = 0  # inside <a href>
        self.code_depth = 0
        self.code_text = None  # the text of the <code> being read, and whether it is linked
        self.unlinked_codes = []  # texts of <code> elements outside any link
        self.title = ""
        self.in_title = False

    def note_tag(self, tag, a):
        if tag == "img" and a.get("src"):
            self.images.append((a["src"], a))
        if tag == "link" and "stylesheet" in (a.get("rel") or "") and a.get("href"):
            self.stylesheets.append(a["href"])

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.note_tag(tag, a)
        if tag == "a" and a.get("href"):
            self.link_depth += 1
        if tag == "code":
            self.code_depth += 1
            if self.code_depth == 1:
                self.code_text = ([], self.link_depth > 0)
        if tag == "title":
            self.in_title = True
        for key in ("id", "name"):
            if a.get(key):
                self.ids.add(a[key])
        if tag == "a" and a.get("href"):
            self.refs.append(("link", a["href"]))
        if tag == "img" and a.get("src"):
            self.refs.append(("image", a["src"]))
        if tag in ("link",) and a.get("href"):
            self.refs.append(("link", a["href"]))
        if tag == "script" and a.get("src"):
            self.refs.append(("script", a["src"]))
        if tag in self.SKIP:
            self.skip_depth += 1
        if tag == "div":
            is_fragment = "fragment" in (a.get("class") or "").split()
            self.div_stack.append(is_fragment)
            self.fragment_depth += is_fragment

    def handle_startendtag(self, tag, attrs):
        # <img .../>, <br/>: no end tag follows, so do not count them as open elements
        a = dict(attrs)
        self.note_tag(tag, a)
        for key in ("id", "name"):
            if a.get(key):
                self.ids.add(a[key])
        if tag == "img" and a.get("src"):
            self.refs.append(("image", a["src"]))
        if tag == "link" and a.get("href"):
            self.refs.append(("link", a["href"]))

    def handle_endtag(self, tag):
        if tag == "a" and self.link_depth:
            self.link_depth -= 1
        if tag == "code" and self.code_depth:
            self.code_depth -= 1
            if self.code_depth == 0 and self.code_text is not None:
                chunks, linked = self.code_text
                if not linked and not self.fragment_depth:
                    self.unlinked_codes.append("".join(chunks))
                self.code_text = None
        if tag == "title":
            self.in_title = False
        if tag in self.SKIP and self.skip_depth:
            self.skip_depth -= 1
        if tag == "div" and self.div_stack:
            self.fragment_depth -= self.div_stack.pop()

    def handle_data(self, data):
        self.all_text.append(data)
        if self.in_title:
            self.title += data
        if self.code_text is not None:
            self.code_text[0].append(data)
        if not self.skip_depth and not self.fragment_depth:
            self.prose.append(data)

    def handle_entityref(self, name):
        self.handle_data(f"&{name};")

    def handle_charref(self, name):
        self.handle_data(f"&#{name};")


def png_width(root, src):
    """The pixel width of a PNG of the site (0 when it is not a local PNG)."""
    path = os.path.join(root, unquote(urlsplit(src).path))
    if urlsplit(src).scheme or not path.lower().endswith(".png") or not os.path.isfile(path):
        return 0
    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n":
        return 0
    return int.from_bytes(head[16:20], "big")


def png_texts(root, src):
    """The tEXt chunks of a PNG of the site, as one string ('' for anything else)."""
    path = os.path.join(root, unquote(urlsplit(src).path))
    if urlsplit(src).scheme or not path.lower().endswith(".png") or not os.path.isfile(path):
        return ""
    with open(path, "rb") as f:
        data = f.read()
    texts, at = [], 8
    while at + 8 <= len(data):
        length = int.from_bytes(data[at:at + 4], "big")
        kind = data[at + 4:at + 8]
        if kind == b"tEXt":
            texts.append(data[at + 8:at + 8 + length].replace(b"\0", b": ").decode("latin-1"))
        if kind == b"IEND":
            break
        at += 12 + length
    return "\n".join(texts)


STYLESHEETS = {}


def stylesheet_text(root, href):
    path = os.path.join(root, unquote(urlsplit(href).path))
    if path not in STYLESHEETS:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                STYLESHEETS[path] = f.read()
        except OSError:
            STYLESHEETS[path] = ""
    return STYLESHEETS[path]


def context(text, start, end, width=50):
    s = text[max(0, start - width):end + width].replace("\n", " ")
    return re.sub(r"\s+", " ", s)


def check_site(root):
    problems = []
    pages = {}
    for name in sorted(os.listdir(root)):
        if not name.endswith(".html"):
            continue
        p = Page()
        with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
            text = f.read()
        p.feed(text)
        pages[name] = (p, text)
    for name, (p, text) in pages.items():
        if name.endswith("_source.html"):
            continue
        # <title> is outside <body> but a reader sees it in the tab and the bookmark
        prose = "".join(p.prose)
        for m in RAW_TAG.finditer(prose):
            problems.append(f"{name}: raw HTML tag shown as text: ...{context(prose, m.start(), m.end())}...")
        for m in DASH_IN_CODE.finditer(prose):
            problems.append(f"{name}: en dash where '--' was meant (code span not recognised): "
                            f"...{context(prose, m.start(), m.end())}...")
        for m in re.finditer(r"\\[-@&$#<>%.|\"]", prose):
            problems.append(f"{name}: Doxygen escape shown as text: "
                            f"...{context(prose, m.start(), m.end())}...")
        for m in re.finditer(r"`", prose):
            problems.append(f"{name}: stray backtick in rendered text: "
                            f"...{context(prose, m.start(), m.end())}...")
        for m in (RAW_BOLD.finditer(prose) if not CODE_PAGE.search(name) else ()):
            problems.append(f"{name}: raw Markdown shown as text (a bold Doxygen did not take): "
                            f"...{context(prose, m.start(), m.end())}...")
        for m in RAW_LINK.finditer(prose):
            problems.append(f"{name}: raw Markdown shown as text (a link Doxygen did not make): "
                            f"...{context(prose, m.start(), m.end())}...")
        everything = "".join(p.all_text)
        for m in MACHINE_PATH.finditer(everything):
            problems.append(f"{name}: a path of the machine that made it: '{m.group(0)}' "
                            f"(...{context(everything, m.start(), m.end())}...)")
        for code in p.unlinked_codes:
            # a figure of the site named as code (a pattern such as timeline_chNN.png is not)
            if FIGURE_PATH.search(code.strip()) and \
                    os.path.isfile(os.path.join(root, os.path.basename(code.strip()))):
                problems.append(f"{name}: figure path without a link: '{code.strip()}' (link "
                                "it: [what it shows](path))")
        page_title = p.title.split("|")[-1].strip() if p.title else ""
        if PAGE_NAMED_AFTER_A_CHAPTER.match(page_title) and not name.startswith(page_title):
            problems.append(f"{name}: page titled '{page_title}', a section name: its Markdown "
                            "file needs a title line (# ...) of its own")
        capped = any(SCALED_BY_CSS.search(stylesheet_text(root, href)) for href in p.stylesheets)
        for src, attrs in p.images:
            for m in MACHINE_PATH.finditer(png_texts(root, src)):
                problems.append(f"{name}: figure {src} carries a path of the machine that made "
                                f"it: '{m.group(0)}'")
            width = png_width(root, src)
            scaled = capped or attrs.get("width") or "max-width" in (attrs.get("style") or "")
            if width and width > WIDE_PX and not scaled:
                problems.append(f"{name}: wide figure shown at its own size: {src} is {width} px "
                                f"wide and nothing caps it at the text width (max-width: 100%)")
        for kind, url in p.refs:
            parts = urlsplit(url)
            if parts.scheme or url.startswith("//") or url.startswith("javascript:"):
                continue
            path = unquote(parts.path)
            if path == "":
                target = name
            else:
                if path.startswith("../") or path.startswith("/"):
                    problems.append(f"{name}: {kind} '{url}' points outside the site (a source-"
                                    "tree path Doxygen did not resolve)")
                    continue
                target = os.path.normpath(path)
                if not os.path.exists(os.path.join(root, target)):
                    problems.append(f"{name}: dead {kind} '{url}' (no {target} in the site)")
                    continue
            if parts.fragment and target.endswith(".html") and target in pages:
                if parts.fragment not in pages[target][0].ids:
                    problems.append(f"{name}: dead {kind} '{url}' ({target} has no "
                                    f"#{parts.fragment})")
    # de-duplicate (the same heading appears in the page, its table of contents and the tree)
    seen, unique = set(), []
    for pr in problems:
        if pr not in seen:
            seen.add(pr)
            unique.append(pr)
    return unique, len(pages)


SELF_TEST_PAGES = {  # page -> (html body, text the problem must contain, or None: clean)
    "index.html": ('<a href="good.html#sec">ok</a> <img src="pic.png"/> <code>--seed=1</code>', None),
    "good.html": ('<h2 id="sec">Why <code>init</code></h2><pre>a `b` &lt;tt&gt;</pre>', None),
    "tag.html": ("<h2>Why &lt;tt&gt;init&lt;/tt&gt;</h2>", "raw HTML tag"),
    "dash.html": ("rerun with &ndash;seed=7", "en dash"),
    "tick.html": ("run by <code>x</code>; seed 7`).", "stray backtick"),
    "escape.html": ("for runs without \\-\\-seed", "escape shown"),
    "deadlink.html": ('<a href="missing.html">x</a>', "dead link"),
    "deadimage.html": ('<img src="sweep.png"/>', "dead image"),
    "deadanchor.html": ('<a href="good.html#nope">x</a>', "has no #nope"),
    "outside.html": ('<a href="../../docs/results/x.log">log</a>', "outside the site"),
    "bold.html": ("A block-scope **<code>cuda::barrier</code>** tells", "bold Doxygen did not"),
    "mdlink.html": ("see [the sweep](plots/sweep.png) here", "link Doxygen did not make"),
    "machine.html": ("<code>ch04 --timeline=/root/out/ch04.json</code>", "path of the machine"),
    "figpath.html": ("buffer size (<code>docs/results/h200/plots/pic.png</code>)",
                     "figure path without a link"),
    "figlinked.html": ('<a href="pic.png"><code>docs/results/h200/plots/pic.png</code></a>', None),
    "figpattern.html": ("one per chapter, <code>plots/timeline_chNN.png</code>", None),
    "namespacetut.html": ("int run_chapter (int argc, char **argv) ... char **argv", None),
    "wide.html": ('<div class="image"><img src="wide.png"/></div>', "wide figure"),
    "widescaled.html": ('<link href="capped.css" rel="stylesheet" type="text/css"/>'
                        '<div class="image"><img src="wide.png"/></div>', None),
    "widesized.html": ('<img src="wide.png" width="100%"/>', None),
    "machinefig.html": ('<img src="footer.png" width="100%"/>', "carries a path of the machine"),
}
SELF_TEST_TITLES = {"untitled.html": ("t | ch00_gpu_ceiling", "needs a title line")}


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        for name, (body, _) in SELF_TEST_PAGES.items():
            with open(os.path.join(root, name), "w") as f:
                f.write(f"<html><head><title>t</title></head><body>{body}</body></html>")
        for name, (title, _) in SELF_TEST_TITLES.items():
            with open(os.path.join(root, name), "w") as f:
                f.write(f"<html><head><title>{title}</title></head><body>ok</body></html>")
        with open(os.path.join(root, "pic.png"), "wb") as f:
            f.write(b"")
        with open(os.path.join(root, "wide.png"), "wb") as f:  # a PNG header: 1800 x 600 px
            f.write(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIHDR" + (1800).to_bytes(4, "big")
                    + (600).to_bytes(4, "big"))
        with open(os.path.join(root, "footer.png"), "wb") as f:  # a footer in a tEXt chunk
            text = b"Description\0ch04 --timeline=/root/out/ch04.json"
            f.write(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIHDR" + (900).to_bytes(4, "big")
                    + (600).to_bytes(4, "big") + b"\x08\x02\x00\x00\x00" + b"CRC!"
                    + len(text).to_bytes(4, "big") + b"tEXt" + text + b"CRC!"
                    + b"\x00\x00\x00\x00IEND" + b"CRC!")
        with open(os.path.join(root, "capped.css"), "w") as f:
            f.write("div.image img { max-width: 100%; height: auto; }\n")
        problems, _ = check_site(root)
    bad = 0
    expectations = dict(SELF_TEST_PAGES)
    expectations.update({n: (None, e) for n, (_, e) in SELF_TEST_TITLES.items()})
    for name, (_, expect) in expectations.items():
        found = [p for p in problems if p.startswith(name + ":")]
        ok = (not found) if expect is None else (len(found) == 1 and expect in found[0])
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {found if found else 'clean'}")
        bad += not ok
    print("self-test:", "PASS" if not bad else f"FAIL ({bad} page(s))")
    return 1 if bad else 0


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        return self_test()
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    if not os.path.isfile(os.path.join(root, "index.html")):
        print(f"FAIL: {root} has no index.html (build the site first: "
              "cmake --build build --target docs)")
        return 1
    problems, n = check_site(root)
    for pr in problems:
        print("FAIL:", pr)
    print(f"checked {n} pages: {'OK' if not problems else f'{len(problems)} problem(s)'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
