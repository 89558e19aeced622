#!/usr/bin/env python3
"""Doxygen input filter: make the Markdown that GitHub renders well render the same in Doxygen.

    doxygen_filter.py FILE        (Doxygen runs it through FILTER_PATTERNS; prints to stdout)
    doxygen_filter.py --image-dirs A.md B.md ...   (the folders IMAGE_PATH needs, quoted)
    doxygen_filter.py --linked-figures A.md ...    (the figure files HTML_EXTRA_FILES needs)

Doxygen 1.9 reads Markdown a little differently from GitHub. Each rule below fixes one way the
site used to differ, without changing what a reader of the repository sees. Line count and
order are kept, so Doxygen's warnings still name the right line.

Markdown files (outside ``` / ~~~ fences and outside code spans):
  1. Headings: Doxygen shows a code span in a heading as a literal "<tt>x</tt>" (in the page
     title, the page list and the table of contents), so heading code spans become plain text.
  2. A code span holding a single quote (`FULL_ONLY='a|b' cmd`): Doxygen takes `...' for a
     typographic quote and loses track of every backtick after it on the line (the next
     "--seed" turns into an en dash and a stray backtick). Such spans get double backticks.
  3. A code span over more than two lines: Doxygen ends it at the second line break; it is
     put on one line (the line breaks move after the paragraph).
  4. Straight double quotes: Doxygen does not render Markdown inside "..." (code spans stay
     as backticks or show as "<tt>"). They become typographic quotes.
  5. "--" in prose (cmake --build): Doxygen makes it an en dash; it is escaped.
  6. Links to files of the repository that are not pages of the site (logs, CSV files,
     folders, images by path, x.md#anchor): an image keeps only its file name (the CMake
     configuration puts its folder in IMAGE_PATH); a link to a figure file ([the sweep](x.png))
     links to the figure's file name (the configuration copies every such file into the site,
     HTML_EXTRA_FILES); a link to a page drops the #anchor (Doxygen links .md files only
     without one); any other link becomes its text followed by the file's path in the
     repository, in code.
  7. Bold: Doxygen leaves the asterisks of **...** as text when the bold text starts or ends
     with a code span or punctuation (**`cuda::barrier`**, **v3 (`wait_prior`).**); every
     **...** pair of a paragraph becomes <b>...</b>, which Doxygen renders with the Markdown
     inside it.
  8. The prose check's figure annotations (<!-- fig: ... -->, <!-- not measured: ... -->) are
     removed: Doxygen drops an HTML comment together with the space that follows it.
C++ files: in /// comments, --flag outside code and quotes is escaped (Doxygen would print an
en dash). A compile-fail source (compile_fail.cu) is a set of translation units, one per case
macro, that define throwaway names at global scope (chapter 10's particle type T); Doxygen
would take them for symbols of the site and link every T of every other source listing to
them. Its code is blanked (comment and #include lines stay, so its page keeps its description
and includes, and the line count stays); the source listing shows the file as it is.
"""
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")
DASHES = re.compile(r"(?<![\\\-])--(?=[A-Za-z])")
FIGURE_SUFFIXES = (".png", ".svg", ".jpg", ".jpeg", ".gif")


def split_code_spans(line):
    """[(is_code, text)] for a line: code spans (with their backticks) and the rest."""
    parts, i, start = [], 0, 0
    while i < len(line):
        if line[i] == "`":
            n = len(line[i:]) - len(line[i:].lstrip("`"))
            run = line[i:i + n]
            close = line.find(run, i + n)
            while close != -1 and close + n < len(line) and line[close + n] == "`":
                close = line.find(run, close + n + 1)
            if close == -1:
                i += n
                continue
            if start < i:
                parts.append((False, line[start:i]))
            parts.append((True, line[i:close + n]))
            i = start = close + n
        else:
            i += 1
    if start < len(line):
        parts.append((False, line[start:]))
    return parts


class Quotes:
    """Alternates opening and closing typographic quotes within a paragraph."""

    def __init__(self):
        self.open = False

    def replace(self, text):
        out = []
        in_tag = False
        for ch in text:
            if ch == "<":
                in_tag = True
            elif ch == ">":
                in_tag = False
            if ch == '"' and not in_tag:
                out.append("\u201d" if self.open else "\u201c")
                self.open = not self.open
            else:
                out.append(ch)
        return "".join(out)


def rewrite_link(m, md_dir):
    bang, text, target = m.group(1), m.group(2), m.group(3)
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith(("#", "@", "\\")):
        return m.group(0)
    path, _, fragment = target.partition("#")
    full = os.path.normpath(os.path.join(md_dir, path))
    if not os.path.exists(full):
        return m.group(0)  # a dead link: leave it for the site check to report
    if bang:
        return f"![{text}]({os.path.basename(path)})"
    if path.lower().endswith(FIGURE_SUFFIXES) and os.path.isfile(full):
        return f"[{text}]({os.path.basename(path)})"  # the file is copied into the site
    if path.endswith(".md") and os.path.isfile(full):
        return f"[{text}]({path})" if fragment else m.group(0)
    shown = os.path.relpath(full, REPO) + ("/" if os.path.isdir(full) else "")
    return f"{text} (`{shown}`)" if text else f"`{shown}`"


def bold_to_html(parts):
    """[(is_code, text)] with every **...** pair outside code spans made <b>...</b> (rule 7).
    An odd count leaves the paragraph as it is (a lone ** is not bold on GitHub either)."""
    marks = sum(text.count("**") for code, text in parts if not code)
    if marks == 0 or marks % 2:
        return parts
    out, opening = [], True
    for code, text in parts:
        if code:
            out.append((code, text))
            continue
        pieces = text.split("**")
        rebuilt = pieces[0]
        for piece in pieces[1:]:
            rebuilt += ("<b>" if opening else "</b>") + piece
            opening = not opening
        out.append((code, rebuilt))
    return out


def filter_block(text, md_dir, heading):
    """One paragraph (lines joined by newlines: a code span may continue on the next line) or
    one heading line."""
    quotes = Quotes()
    pieces = []
    moved_newlines = 0
    parts = split_code_spans(text)
    if not heading:
        parts = bold_to_html(parts)
    for is_code, part in parts:
        if is_code and part.count("\n") > 1:
            # Doxygen 1.9 ends a code span at its second line break: put it on one line, and
            # the line breaks after the paragraph, so later lines keep their numbers
            moved_newlines += part.count("\n")
            part = part.replace("\n", " ")
        if is_code:
            body = part.strip("`")
            if heading:
                pieces.append(body)
            elif part.startswith("`") and not part.startswith("``") and "'" in body:
                pieces.append(f"``{body}``" if not body.startswith("`") else f"`` {body} ``")
            else:
                pieces.append(part)
            continue
        if part.lstrip().startswith("<!--"):
            pieces.append(part)
            continue
        part = LINK.sub(lambda m: rewrite_link(m, md_dir), part)
        # a rewritten link may have brought in a code span: keep it out of the rules
        for code2, p2 in split_code_spans(part):
            pieces.append(p2 if code2 else DASHES.sub(r"\\-\\-", quotes.replace(p2)))
    return "".join(pieces) + "\n" * moved_newlines


def filter_markdown(lines, path):
    md_dir = os.path.dirname(os.path.abspath(path))
    out, fence, paragraph = [], None, []

    def flush():
        if paragraph:
            out.extend(filter_block("\n".join(paragraph), md_dir, False).split("\n"))
            paragraph.clear()

    for line in lines:
        m = FENCE.match(line)
        if fence:
            if m and m.group(1) == fence:
                fence = None
            out.append(line)
        elif m:
            flush()
            fence = m.group(1)
            out.append(line)
        elif not line.strip():
            flush()
            out.append(line)
        elif not paragraph and (line.startswith("    ") or line.startswith("\t")):
            out.append(line)  # an indented code block (or a nested list's text: left alone)
        elif HEADING.match(line):
            flush()
            out.append(filter_block(line, md_dir, True))
        else:
            paragraph.append(line)
    flush()
    return out


def escape_dashes_outside_quotes(text):
    """Escape "--x" except inside "...": Doxygen leaves quoted text as it is (no en dash, and
    an escape would show)."""
    parts = text.split('"')
    return '"'.join(DASHES.sub(r"\\-\\-", p) if i % 2 == 0 else p for i, p in enumerate(parts))


def filter_cpp(lines):
    out, block = [], None
    for line in lines:
        i = line.find("///")
        if i == -1:
            out.append(line)
            continue
        head, comment = line[:i + 3], line[i + 3:]
        for start, end in (("@code", "@endcode"), ("@verbatim", "@endverbatim"),
                           ("\\code", "\\endcode"), ("\\verbatim", "\\endverbatim")):
            if block is None and start in comment and end not in comment:
                block = end
                break
            if block == end and end in comment:
                block = None
                break
        else:
            if block is None:
                comment = "".join(escape_dashes_outside_quotes(t) if not code else t
                                  for code, t in split_code_spans(comment))
        out.append(head + comment)
    return out


def image_dirs(md_files):
    """Folders of the images the Markdown files show (for IMAGE_PATH), one per line."""
    dirs = []
    for md in md_files:
        fence = None
        with open(md, encoding="utf-8") as f:
            for line in f:
                m = FENCE.match(line)
                if m:
                    if fence is None:
                        fence = m.group(1)
                    elif m.group(1) == fence:
                        fence = None
                    continue
                if fence:
                    continue
                for bang, _, target in LINK.findall(line):
                    if not bang or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                        continue
                    full = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(md)),
                                                         target.partition("#")[0]))
                    if os.path.isfile(full) and os.path.dirname(full) not in dirs:
                        dirs.append(os.path.dirname(full))
    return dirs


FIGURE_COMMENT = re.compile(r"<!--\s*(?:fig:|not measured:).*?-->")


def strip_figure_comments(lines):
    """The prose check's annotations (<!-- fig: ... -->, <!-- not measured: ... -->,
    tools/check_prose.py) go: Doxygen drops an HTML comment together with the space after it
    ("20 µs<!-- ... --> after" became "20 µsafter"). Code (fenced, or indented by 4) keeps them."""
    out, fence = [], None
    for line in lines:
        m = FENCE.match(line)
        if fence:
            fence = None if m and m.group(1) == fence else fence
        elif m:
            fence = m.group(1)
        elif not line.startswith("    "):
            line = FIGURE_COMMENT.sub("", line)
        out.append(line)
    return out


def linked_figures(md_files):
    """Figure files the Markdown files link to (not show): the site needs a copy of each, for
    HTML_EXTRA_FILES (rule 6)."""
    files = []
    for md in md_files:
        fence = None
        with open(md, encoding="utf-8") as f:
            for line in f:
                m = FENCE.match(line)
                if m:
                    fence = m.group(1) if fence is None else (None if m.group(1) == fence else fence)
                    continue
                if fence:
                    continue
                for bang, _, target in LINK.findall(line):
                    path = target.partition("#")[0]
                    if bang or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                        continue
                    full = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(md)),
                                                         path))
                    if path.lower().endswith(FIGURE_SUFFIXES) and os.path.isfile(full) \
                            and full not in files:
                        files.append(full)
    return files


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--image-dirs":
        print(" ".join(f'"{d}"' for d in image_dirs(sys.argv[2:])))
        return
    if len(sys.argv) >= 2 and sys.argv[1] == "--linked-figures":
        print(" ".join(f'"{d}"' for d in linked_figures(sys.argv[2:])))
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if path.endswith(".md"):
        lines = filter_markdown(strip_figure_comments(lines), path)
    else:
        if os.path.basename(path) == "compile_fail.cu":
            lines = [line if line.lstrip().startswith(("//", "#include")) else ""
                     for line in lines]
        lines = filter_cpp(lines)
    sys.stdout.write("\n".join(lines))


if __name__ == "__main__":
    main()
