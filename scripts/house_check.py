#!/usr/bin/env python3
"""Checks the house rules that a compiler does not (docs/STYLE.md):

  layering  each #include "x.h" of the project's own headers names a header of the including
            target itself or of one of its direct deps (Bazel's layering_check, which gcc's
            toolchain does not offer); a project header that no target declares is an error too
  sizes     no .cc/.h/.cu over 500 lines; no *_main.cc over 80 lines; no main() over 80 lines;
            outside tests/ and testing/, no function over 80 lines (signature to closing brace)

  scripts/house_check.py            # the checkout this script is in
  scripts/house_check.py --root DIR # another tree (tests/house plants violations in one)

Prints one line per violation ("file:line: why") and a summary line; exit 1 when any is found.
BUILD files are read as bazel_to_cmake.py reads them (Starlark run as Python).
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bazel_to_cmake as b2c  # noqa: E402

MAX_FILE_LINES = 500
MAX_MAIN_LINES = 80
MAX_FUNCTION_LINES = 80
TEST_DIRS = ("tests/", "testing/")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCE_EXT = (".cc", ".h", ".cu")
# Headers no Bazel target declares, on purpose.
UNDECLARED_OK = {
    # The fused CUDA kernels: CMake builds them when LibTorch has CUDA (CMakeLists.txt); the
    # Bazel build is CPU-only, and fused_norm.cc includes this only under
    # TUNEFLEET_FUSED_NORM_CUDA.
    "trainer/model/fused_norm_kernels.h",
}


def targets_of(packages):
    """-> {label: (pkg, files, dep labels)} for every C++ rule (cc_proto's generated headers
    included), and {header path: label} of every declared header."""
    rules = {}
    owner = {}
    for pkg, (_, rs) in packages.items():
        for kind, attrs in rs:
            if kind not in ("cc_library", "cc_binary", "cc_test", "cc_proto"):
                continue
            label = "//%s:%s" % (pkg, attrs["name"])
            deps = []
            for d in attrs.get("deps", []):
                repo, p, name = b2c.parse_label(d, pkg)
                if not repo:
                    deps.append("//%s:%s" % (p, name))
            if kind == "cc_proto":
                files = [s[:-len(".proto")] + ".pb.h" for s in attrs.get("srcs", [])]
                hdrs = files
                files = []  # generated: nothing to read
            else:
                files = list(attrs.get("srcs", [])) + list(attrs.get("hdrs", []))
                hdrs = list(attrs.get("hdrs", []))
            rules[label] = (pkg, ["%s/%s" % (pkg, f) for f in files], deps)
            for h in hdrs:
                owner.setdefault("%s/%s" % (pkg, h), label)
    return rules, owner


def resolve_aliases(packages):
    alias = {}
    for pkg, (_, rs) in packages.items():
        for kind, attrs in rs:
            if kind == "alias":
                _, p, name = b2c.parse_label(attrs["actual"], pkg)
                alias["//%s:%s" % (pkg, attrs["name"])] = "//%s:%s" % (p, name)
    return alias


def check_layering(root, packages):
    rules, owner = targets_of(packages)
    alias = resolve_aliases(packages)
    problems = []
    for label, (pkg, files, deps) in sorted(rules.items()):
        allowed = {label} | {alias.get(d, d) for d in deps}
        for path in files:
            if not path.endswith(SOURCE_EXT):
                continue
            full = os.path.join(root, path)
            if not os.path.exists(full):
                continue
            text = open(full, encoding="utf-8", errors="replace").read()
            for m in INCLUDE.finditer(text):
                inc = m.group(1)
                line = text.count("\n", 0, m.start()) + 1
                owner_label = owner.get(inc)
                if owner_label is None:
                    if inc not in UNDECLARED_OK and os.path.exists(os.path.join(root, inc)):
                        problems.append("%s:%d: includes %s, which no target declares in hdrs"
                                        % (path, line, inc))
                    continue  # a system or third-party header
                if owner_label not in allowed:
                    problems.append("%s:%d: %s includes %s of %s, not a direct dep"
                                    % (path, line, label, inc, owner_label))
    return problems


# Function bodies, found by a small C++ scanner: comments, literals and preprocessor lines are
# blanked; a `{` whose enclosing braces are all namespaces/classes and whose text since the last
# `;`/`{`/`}` reads like a signature (`...)`, qualifiers, `-> T`, or `) :` initialisers) opens one.
def strip(text):
    """Comments, string and char literals blanked (newlines kept)."""
    out = []; i = 0; n = len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i); j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2); j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i-1].isalnum() or text[i-1] == '_')):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if m:
                end = text.find(")" + m.group(1) + '"', i)
                j = n if end < 0 else end + len(m.group(1)) + 2
                out.append('""' + re.sub(r"[^\n]", " ", text[i+2:j])); i = j
            else:
                out.append(c); i += 1
        elif c == '"' or (c == "'" and not (i > 0 and text[i-1].isalnum())):
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + c); i = j + 1
        else:
            out.append(c); i += 1
    res = "".join(out)
    # preprocessor lines (and their continuations) blanked
    lines = res.split("\n"); cont = False
    for k, l in enumerate(lines):
        if cont or l.lstrip().startswith("#"):
            cont = l.rstrip().endswith("\\")
            lines[k] = " " * len(l)
    return "\n".join(lines)

SCOPE = re.compile(r"^\s*(template\s*<.*>\s*)?(namespace|class|struct|union|enum|extern)\b", re.S)
FUNC_END = re.compile(r"\)\s*(const|override|final|noexcept|mutable|&|\s)*$|->[^;]*$|\)\s*:(?!:)", re.S)

def function_spans(text):
    """-> [(start line, lines, name)] of function bodies at namespace/class scope."""
    s = strip(text)
    stack = []  # kinds: scope / func / other
    header_start = 0
    out = []
    line = 1
    for i, c in enumerate(s):
        if c == "\n":
            line += 1
        if c == ";" and all(k[0] == "scope" for k in stack):
            header_start = i + 1
        elif c == "{":
            header = s[header_start:i]
            if all(k[0] == "scope" for k in stack):
                if SCOPE.match(header) and "(" not in header.split("{")[0].split("=")[0] or header.strip() == "" and False:
                    stack.append(("scope", line, ""))
                    header_start = i + 1
                elif "(" in header and FUNC_END.search(header.rstrip()):
                    st = header_start + len(header) - len(header.lstrip())
                    sl = s.count("\n", 0, st) + 1
                    m = re.search(r"([\w:~]+)\s*\(", header)
                    stack.append(("func", sl, m.group(1) if m else "?"))
                else:
                    stack.append(("other", line, ""))
            else:
                stack.append(("other", line, ""))
        elif c == "}":
            if not stack: continue
            kind, sl, name = stack.pop()
            if kind == "func":
                out.append((sl, line - sl + 1, name))
            if kind in ("func", "scope") and all(k[0] == "scope" for k in stack):
                header_start = i + 1
    return out


def main_function_lines(text):
    """Lines of the body of `int main(...)`, or 0 when the file has none."""
    m = re.search(r"^int main\s*\(", text, re.M)
    if not m:
        return 0
    start = text.count("\n", 0, m.start())
    depth = 0
    seen = False
    for i, line in enumerate(text[m.start():].splitlines()):
        depth += line.count("{") - line.count("}")
        seen = seen or "{" in line
        if seen and depth <= 0:
            return i + 1
    return len(text.splitlines()) - start


def check_sizes(root, files):
    problems = []
    for path in files:
        text = open(os.path.join(root, path), encoding="utf-8", errors="replace").read()
        n = text.count("\n")
        if n > MAX_FILE_LINES:
            problems.append("%s:%d: %d lines; the limit is %d (split it by concept)"
                            % (path, MAX_FILE_LINES + 1, n, MAX_FILE_LINES))
        if path.endswith("_main.cc") and n > MAX_MAIN_LINES:
            problems.append("%s:%d: a main file of %d lines; the limit is %d (options and "
                            "start-up belong in libraries)" % (path, MAX_MAIN_LINES + 1, n,
                                                              MAX_MAIN_LINES))
        if not path.startswith(TEST_DIRS):
            for start, lines, name in function_spans(text):
                if lines > MAX_FUNCTION_LINES and name != "main":
                    problems.append("%s:%d: %s() has %d lines; the limit is %d (split it at its "
                                    "seams)" % (path, start, name, lines, MAX_FUNCTION_LINES))
        body = main_function_lines(text)
        if body > MAX_MAIN_LINES:
            problems.append("%s: main() has %d lines; the limit is %d" % (path, body,
                                                                         MAX_MAIN_LINES))
    return problems


def source_files(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(("bazel-", "."))
                             and (rel != "." or d not in b2c.SKIP_DIRS))
        for f in filenames:
            if f.endswith(SOURCE_EXT):
                out.append(os.path.normpath(os.path.join(rel, f)))
    return sorted(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=b2c.ROOT, help="the tree to check (default: this checkout)")
    opts = ap.parse_args()
    root = os.path.abspath(opts.root)
    b2c.ROOT = root
    packages = {p: b2c.load_package(p) for p in b2c.find_packages()}
    files = source_files(root)
    problems = check_layering(root, packages) + check_sizes(root, files)
    for p in problems:
        print(p)
    print("house check: %s (%d files, %d packages)"
          % ("%d problem(s)" % len(problems) if problems else "ok", len(files), len(packages)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
