#!/usr/bin/env python3
"""Holds README.md and docs/*.md to the code, so the documents cannot rot:
- every `hearth …` command in a sh, console or bash block (a line may start with `$ ` or `sudo`),
  and every inline code span that starts with `hearth `, names a real subcommand and only options
  that subcommand's --help lists;
- every repository path they mention (in code spans or blocks) under scripts/, systemd/, deploy/,
  Benchmarks/, schemas/, Sources/, Tests/, docs/ or grafana/ exists;
- every relative Markdown link resolves to a file, and its #anchor to a heading there.
Prints every problem and exits 1 on any, else one summary line.
    python3 scripts/check-docs.py .build/debug/hearth      (from the repository's root)"""

import collections
import pathlib
import re
import shlex
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHELL_BLOCKS = {"sh", "console", "bash", "shell"}
PATH = re.compile(r"(?<![\w./$%~-])((?:scripts|systemd|deploy|Benchmarks|schemas|Sources|Tests|docs|grafana)/[\w.*/-]*)")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)")


def documents():
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def split_markdown(text):
    """The file's fenced blocks as (language, first line number, lines), and its prose lines
    (fenced lines blanked, so line numbers still count)."""
    blocks, prose, current = [], [], None
    for number, line in enumerate(text.split("\n"), 1):
        fence = FENCE.match(line)
        if current is None and fence:
            current = (fence.group(3).lower(), number + 1, [], fence.group(2))
            prose.append("")
        elif current is not None and line.strip().startswith(current[3]) and not line.strip().strip(current[3][0]):
            blocks.append(current[:3])
            current = None
            prose.append("")
        elif current is not None:
            current[2].append(line)
            prose.append("")
        else:
            prose.append(line)
    return blocks, prose


def inline_spans(prose):
    """Inline code spans as (line number, text); a span may run over lines within a paragraph."""
    text = "\n".join(prose)
    for match in re.finditer(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", text, flags=re.S):
        if "\n\n" in match.group(2):
            continue
        yield text.count("\n", 0, match.start()) + 1, " ".join(match.group(2).split())


class Binary:
    def __init__(self, path):
        self.path = path
        self.helps = {}

    def help(self, words):
        key = tuple(words)
        if key not in self.helps:
            run = subprocess.run([self.path, *words, "--help"], capture_output=True, text=True, timeout=60)
            self.helps[key] = run.stdout + run.stderr if run.returncode == 0 else None
        return self.helps[key]

    @staticmethod
    def subcommands(help_text):
        names, inside = set(), False
        for line in help_text.splitlines():
            if line.startswith("SUBCOMMANDS:"):
                inside = True
            elif inside and re.match(r"^\S", line):
                inside = False
            elif inside:
                match = re.match(r"^  (\S+)(\s|$)", line)
                if match:
                    names.add(match.group(1))
        return names

    def check(self, words):
        """words follow `hearth`. Returns (the subcommand path, problems)."""
        path, problems = [], []
        help_text = self.help(path)
        if help_text is None:
            return path, [f"`{self.path} --help` fails"]
        arguments = list(words)
        while arguments and not arguments[0].startswith("-") and arguments[0] in self.subcommands(help_text):
            path.append(arguments.pop(0))
            help_text = self.help(path)
            if help_text is None:
                return path, [f"`hearth {' '.join(path)} --help` fails"]
        if self.subcommands(help_text):
            command = " ".join(["hearth", *path])
            problems.append(f"`{' '.join(['hearth', *words])}`: `{command}` has no subcommand named {arguments[0]}"
                            if arguments else f"`{command}` names no subcommand")
            return path, problems
        for argument in arguments:
            match = re.match(r"^(--[A-Za-z0-9][A-Za-z0-9-]*)", argument)
            if match and not re.search(re.escape(match.group(1)) + r"(?![A-Za-z0-9-])", help_text):
                problems.append(f"`hearth {' '.join(path)}` has no option {match.group(1)}")
        return path, problems


def join_continuations(lines):
    joined, pending = [], ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
        else:
            joined.append(pending + line)
            pending = ""
    if pending:
        joined.append(pending)
    return joined


def tokens(line):
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        return list(lexer)
    except ValueError:
        return line.split("#", 1)[0].split()


def commands_in_shell_line(line):
    """The argument lists after each `hearth` that runs as a command on a shell line."""
    line = re.sub(r"^\s*\$\s+", "", line)
    words = tokens(line)
    found, start = [], True
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("&&", "||", ";", "|", "(", ")", "$(", "`"):
            start = True
        elif start:
            if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word) or word in ("time", "exec", "env", "nice"):
                pass  # an environment assignment or a wrapper: the command comes next
            elif word == "sudo":
                while index + 1 < len(words) and words[index + 1].startswith("-"):
                    index += 1
                    if words[index] in ("-u", "-g", "-C", "-D", "-h", "-p", "-U") and index + 1 < len(words):
                        index += 1
            else:
                start = False
                if pathlib.PurePosixPath(word).name == "hearth":
                    rest = []
                    for following in words[index + 1:]:
                        if following in ("&&", "||", ";", "|", ")", "&"):
                            break
                        rest.append(following)
                    found.append(rest)
        index += 1
    return found


def anchors(path, cache={}):
    if path not in cache:
        slugs, seen = set(), collections.Counter()
        _, prose = split_markdown(path.read_text())
        for line in prose:
            match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not match:
                continue
            title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", match.group(1))
            slug = re.sub(r"[^\w\- ]", "", title.replace("`", "").strip().lower()).replace(" ", "-")
            slugs.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
            seen[slug] += 1
        cache[path] = slugs
    return cache[path]


def link_problems(document, where, target):
    """What is wrong with one relative link: a missing file, or an anchor no heading has."""
    file_part, _, anchor = target.partition("#")
    linked = (document.parent / file_part).resolve() if file_part else document
    if not linked.exists():
        return [f"{where}: link to {target}: no such file"]
    if anchor and linked.suffix == ".md" and anchor not in anchors(linked):
        return [f"{where}: link to {target}: no heading with that anchor"]
    return []


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n")[-1].strip(), file=sys.stderr)
        return 2
    binary = Binary(sys.argv[1])
    problems, commands, paths, links = [], 0, set(), 0
    files = documents()
    for document in files:
        name = document.relative_to(ROOT)
        blocks, prose = split_markdown(document.read_text())

        # 1. hearth commands: in shell blocks, then in inline spans
        for language, first, lines in blocks:
            if language not in SHELL_BLOCKS:
                continue
            for offset, line in enumerate(join_continuations(lines)):
                for words in commands_in_shell_line(line):
                    commands += 1
                    _, found = binary.check(words)
                    problems += [f"{name}:{first + offset}: {problem}" for problem in found]
        spans = list(inline_spans(prose))
        for number, span in spans:
            if span.startswith("hearth ") and re.match(r"^hearth [a-z]", span):
                words = re.sub(r"[\[\]()|…]", " ", span).split()[1:]
                words = [word for word in words if word not in ("/",)]
                commands += 1
                _, found = binary.check(words)
                problems += [f"{name}:{number}: {problem}" for problem in found]

        # 2. repository paths, in spans and blocks
        texts = [(number, span) for number, span in spans]
        texts += [(first + offset, line) for _, first, lines in blocks for offset, line in enumerate(lines)]
        for number, text in texts:
            for match in PATH.finditer(text):
                mentioned = match.group(1).rstrip(".,:;")
                paths.add(mentioned)
                if not (list(ROOT.glob(mentioned.rstrip("/"))) if "*" in mentioned else (ROOT / mentioned).exists()):
                    problems.append(f"{name}:{number}: `{mentioned}` does not exist")

        # 3. relative links and their anchors
        for number, line in enumerate(prose, 1):
            for match in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
                target = match.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue
                links += 1
                problems += link_problems(document, f"{name}:{number}", target)
    # Links may also wrap over two lines: check those the line-by-line pass could not see.
    for document in files:
        name = document.relative_to(ROOT)
        _, prose = split_markdown(document.read_text())
        text = "\n".join(prose)
        for match in re.finditer(r"(?<!!)\[[^\]]*\n[^\]]*\]\(([^)\s]+)\)", text):
            target = match.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            links += 1
            number = text.count("\n", 0, match.start()) + 1
            problems += link_problems(document, f"{name}:{number}", target)

    for problem in problems:
        print(problem)
    print(f"docs: {len(files)} files, {commands} hearth commands, {len(paths)} paths, {links} links checked, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
