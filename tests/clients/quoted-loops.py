"""Checks that docs/generated-clients.md shows each client's paging loop exactly as the client's
walk-through runs it: the lines between `begin: every_pet` and `end: every_pet` in the source
must be the code block that follows `<!-- every_pet: PATH -->` in the page. Run by
tests/clients/run.sh; exits 1 and shows both on a difference."""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "generated-clients.md"


def between_markers(path):
    lines = (ROOT / path).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().endswith("begin: every_pet"))
    end = next(i for i, line in enumerate(lines) if line.strip().endswith("end: every_pet"))
    return "\n".join(lines[start + 1 : end]).strip("\n")


def main():
    page = PAGE.read_text()
    quoted = re.findall(r"<!-- every_pet: (\S+) -->\n```\w*\n(.*?)\n```", page, re.S)
    if len(quoted) < 3:
        print(f"{PAGE}: expected a quoted loop per client, found {len(quoted)}", file=sys.stderr)
        return 1
    failed = 0
    for path, shown in quoted:
        source = between_markers(path)
        if shown.strip("\n") != source:
            print(f"{PAGE} shows another loop than {path} runs:\n--- shown\n{shown}\n--- run\n{source}",
                  file=sys.stderr)
            failed += 1
    if not failed:
        print(f"clients: the paging loops in docs/generated-clients.md are the ones run ({len(quoted)})",
              file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
