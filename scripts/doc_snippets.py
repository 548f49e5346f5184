#!/usr/bin/env python3
"""Every code block of the docs is compiled, checked against a file, or skipped with a reason.

Reads Markdown files and their fenced code blocks. A C++ block (```cpp, ```c++, ```cuda) needs a
marker, an HTML comment on the line right before its fence:

  <!-- snippet: host body prelude=async -->     compile it; host: g++ (.cpp), cuda: nvcc (.cu)
  <!-- snippet: cuda split prelude=core run -->  ... and run it (a test; a cuda one is a gpu test)
  <!-- snippet: excerpt tests/dsl/golden/x.hpp --> its lines appear, in order, in that file
  <!-- snippet: skip (why) -->                   nothing, with a reason (required)

  wrap:  body   the block is a function body: snippet::run() returning baton::status, in a struct
                deriving from doc::NAME_env of each prelude (its members are the names the block uses)
         file   the block is namespace-scope code (a `main` in it is called when `run`)
         split  namespace-scope code up to a line `// host`, a function body after it
  prelude=a,b   tests/docs/prelude/a.hpp (host) or a.cuh (cuda), included before the blocks; each
                defines struct doc::a_env; names it puts in namespace doc are visible to every block
  replace=OLD=>NEW   textual replacement before compiling (e.g. Mlp< => CompiledMlp<: the same API
                over kernels compiled once, instead of instantiating CUTLASS kernels here)
  run           the block runs: a host test, or a gpu test (skipped without a GPU)

Other blocks need a language (sh, bash, cmake, text, baton, ...); an unlabelled fence is an error.
A non-C++ block may carry an `excerpt` marker too (the .baton programs of docs/batonc.md do).
In an excerpt, comments (`//` in C++, `#` elsewhere), spacing and lines `...` are ignored.

  doc_snippets.py --root ROOT --out DIR --cmake FILE DOCS...   writes one .cpp / .cu per doc and
                                                              language, and FILE for CMake
  doc_snippets.py --root ROOT --check DOCS...                  lists what is wrong; exit 1 if any
"""
import argparse
import os
import re
import sys

CPP_LANGS = {"cpp", "c++", "cuda", "cu", "cxx"}
OTHER_LANGS = {"sh", "bash", "console", "cmake", "text", "baton", "json", "csv", "python", "diff", "yaml"}
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$")


class Block:
    def __init__(self, doc, line, lang, lines, marker):
        self.doc, self.line, self.lang, self.lines, self.marker = doc, line, lang, lines, marker
        self.kind = None      # host | cuda | excerpt | skip
        self.wrap = "body"
        self.preludes = []
        self.replace = []
        self.run = False
        self.arg = ""         # excerpt path / skip reason

    def where(self):
        return f"{self.doc}:{self.line}"

    def ident(self):
        stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(self.doc))[0])
        return f"doc_{stem}_{self.line}"


def parse_doc(root, doc, problems):
    text = open(os.path.join(root, doc), encoding="utf-8").read().splitlines()
    blocks, i = [], 0
    while i < len(text):
        m = FENCE.match(text[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = len(m.group(1)), m.group(2), m.group(3).lower()
        j = i + 1
        while j < len(text) and not re.match(r"^\s*" + re.escape(fence[0]) + "{%d,}\\s*$" % len(fence), text[j]):
            j += 1
        if j == len(text):
            problems.append(f"{doc}:{i + 1}: fence never closed")
            break
        body = [l[indent:] if l[:indent].strip() == "" else l for l in text[i + 1:j]]
        mk = MARKER.match(text[i - 1]) if i > 0 else None
        b = Block(doc, i + 1, lang, body, mk.group(1) if mk else None)
        blocks.append(b)
        parse_marker(b, problems)
        i = j + 1
    return blocks


def parse_marker(b, problems):
    if b.lang == "":
        problems.append(f"{b.where()}: unlabelled fence: name its language (cpp, cuda, sh, cmake, text, baton, ...)")
        return
    if b.lang not in CPP_LANGS and b.lang not in OTHER_LANGS:
        problems.append(f"{b.where()}: unknown fence language '{b.lang}' (scripts/doc_snippets.py lists them)")
        return
    if b.marker is None:
        if b.lang in CPP_LANGS:
            problems.append(f"{b.where()}: C++ block without a marker: put '<!-- snippet: host|cuda body|file|split "
                            f"[prelude=..] [run] -->' or '<!-- snippet: skip (why) -->' on the line before the fence")
        return
    words = b.marker.split()
    if not words:
        problems.append(f"{b.where()}: empty snippet marker")
        return
    head = words[0]
    if head == "skip":
        b.kind, b.arg = "skip", " ".join(words[1:]).strip("() ")
        if not b.arg:
            problems.append(f"{b.where()}: 'snippet: skip' needs a reason")
        return
    if head == "excerpt":
        if len(words) != 2:
            problems.append(f"{b.where()}: 'snippet: excerpt PATH' takes one path")
            return
        b.kind, b.arg = "excerpt", words[1]
        return
    if b.lang not in CPP_LANGS:
        problems.append(f"{b.where()}: only C++ blocks compile ('{b.lang}' block marked '{head}')")
        return
    if head not in ("host", "cuda"):
        problems.append(f"{b.where()}: marker '{b.marker}': expected host, cuda, excerpt or skip first")
        return
    b.kind = head
    for w in words[1:]:
        if w in ("body", "file", "split"):
            b.wrap = w
        elif w == "run":
            b.run = True
        elif w.startswith("prelude="):
            b.preludes += [p for p in w[len("prelude="):].split(",") if p]
        elif w.startswith("replace=") and "=>" in w:
            old, new = w[len("replace="):].split("=>", 1)
            b.replace.append((old, new))
        else:
            problems.append(f"{b.where()}: marker word '{w}' not understood")
    if b.wrap == "split" and not any(l.strip() == "// host" for l in b.lines):
        problems.append(f"{b.where()}: 'split' needs a line '// host' between namespace-scope code and the body")
    if b.run and b.wrap == "file" and not any(re.search(r"\bint\s+main\s*\(", l) for l in b.lines):
        problems.append(f"{b.where()}: a 'file' block marked 'run' needs an int main()")


def norm(line, cpp):
    line = re.sub(r"//.*$", "", line) if cpp else re.sub(r"#.*$", "", line)
    return " ".join(line.split())


def check_excerpt(root, b, problems):
    path = os.path.join(root, b.arg)
    if not os.path.isfile(path):
        problems.append(f"{b.where()}: excerpt of '{b.arg}', which does not exist")
        return
    cpp = b.lang in CPP_LANGS
    want = [n for n in (norm(l, cpp) for l in b.lines) if n and n != "..."]
    have = [n for n in (norm(l, cpp) for l in open(path, encoding="utf-8").read().splitlines()) if n]
    k = 0
    for w in want:
        while k < len(have) and have[k] != w:
            k += 1
        if k == len(have):
            problems.append(f"{b.where()}: not an excerpt of {b.arg} (comments, spacing and '...' ignored): "
                            f"no line '{w}' there (in order after the block's earlier lines)")
            return
        k += 1


def emit_lines(out, b, lines, first, src):
    out.append(f'#line {first} "{src}"')
    out.extend(lines)


def generate(root, outdir, doc, blocks, lang):
    """One translation unit for the doc's blocks of one language; returns (path, preludes, runs)."""
    mine = [b for b in blocks if b.kind == lang]
    if not mine:
        return None
    ext = "cpp" if lang == "host" else "cu"
    stem = re.sub(r"\W", "_", os.path.splitext(doc)[0])
    path = os.path.join(outdir, f"{stem}.{ext}")
    src = os.path.join(root, doc)
    preludes = []
    for b in mine:
        for p in b.preludes:
            if p not in preludes:
                preludes.append(p)
    out = [f"// generated by scripts/doc_snippets.py from {doc}: its {lang} code blocks; do not edit",
           '#include "baton/status.hpp"']
    out += [f'#include "prelude/{p}.{"hpp" if lang == "host" else "cuh"}"' for p in preludes]
    out += ["#include <cstdio>", "namespace doc {}  // the preludes' names: envs, aliases"]
    for b in mine:
        lines = list(b.lines)
        for old, new in b.replace:
            lines = [l.replace(old, new) for l in lines]
        first = b.line + 1
        out.append(f"namespace {b.ident()} {{  // {doc}:{b.line}")
        out.append("using namespace ::doc;")
        if b.wrap in ("file", "split"):
            cut = len(lines)
            if b.wrap == "split":
                cut = next(i for i, l in enumerate(lines) if l.strip() == "// host") + 1
            emit_lines(out, b, lines[:cut], first, src)
            lines, first = lines[cut:], first + cut
        if b.wrap in ("body", "split"):
            bases = ", ".join(f"::doc::{p}_env" for p in b.preludes)
            out.append(f"#line {len(out) + 2} \"{path}\"")
            out.append(f"struct snippet{' : ' + bases if bases else ''} {{")
            out.append("  ::baton::status run() {")
            emit_lines(out, b, lines, first, src)
            out.append(f"#line {len(out) + 2} \"{path}\"")
            out.append("    return {};")
            out.append("  }")
            out.append("};")
        out.append(f"#line {len(out) + 2} \"{path}\"")
        out.append(f"}}  // namespace {b.ident()}")
    runs = [b for b in mine if b.run]
    if runs:
        out.append("int main() {")
        if lang == "cuda":
            out.append("  int devices = 0;")
            out.append("  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {")
            out.append(f'    std::puts("[  SKIPPED ] no GPU: the runnable snippets of {doc} compiled, not run");')
            out.append("    return 0;")
            out.append("  }")
        out.append("  int failed = 0;")
        for b in runs:
            if b.wrap == "file":
                out.append(f"  {{ int rc = {b.ident()}::main();")
                out.append(f'    std::printf("%s {b.where()}: main() returned %d\\n", rc ? "FAILED" : "ok", rc);')
                out.append("    failed += rc != 0; }")
            else:
                out.append(f"  {{ {b.ident()}::snippet s; ::baton::status st = s.run();")
                out.append(f'    std::printf("%s {b.where()}: %s\\n", st.ok() ? "ok" : "FAILED", st.to_string().c_str());')
                out.append("    failed += !st.ok(); }")
        out.append("  return failed;")
        out.append("}")
    text = "\n".join(out) + "\n"
    if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:  # keep mtimes: no rebuilds
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return path, preludes, bool(runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True)
    ap.add_argument("--out")
    ap.add_argument("--cmake")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("docs", nargs="+", help="paths relative to --root")
    a = ap.parse_args()
    problems, per_doc = [], {}
    for doc in a.docs:
        per_doc[doc] = parse_doc(a.root, doc, problems)
        for b in per_doc[doc]:
            if b.kind == "excerpt":
                check_excerpt(a.root, b, problems)
    counts = {}
    for blocks in per_doc.values():
        for b in blocks:
            k = b.kind or ("unmarked" if b.lang in CPP_LANGS or b.lang == "" else "other")
            counts[k] = counts.get(k, 0) + 1
    if a.check:
        for p in problems:
            print(p)
        print("doc snippets: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
        for blocks in per_doc.values():
            for b in blocks:
                if b.kind == "skip":
                    print(f"  skipped {b.where()}: {b.arg}")
        return 1 if problems else 0
    os.makedirs(a.out, exist_ok=True)
    cm = ["# generated by scripts/doc_snippets.py; do not edit"]
    for doc, blocks in per_doc.items():
        for lang in ("host", "cuda"):
            r = generate(a.root, a.out, doc, blocks, lang)
            if r:
                path, preludes, run = r
                name = re.sub(r"\W", "_", os.path.splitext(doc)[0]).lower()
                cm.append(f'baton_doc_snippets({name}_{lang} {lang} "{path}" "{";".join(preludes)}" {"ON" if run else "OFF"})')
    text = "\n".join(cm) + "\n"
    if not os.path.exists(a.cmake) or open(a.cmake).read() != text:
        with open(a.cmake, "w") as f:
            f.write(text)
    for p in problems:
        print("doc_snippets: " + p, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
