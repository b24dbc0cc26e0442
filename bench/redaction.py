"""Redaction quality and speed against the public secret catalogues.

    python -m bench.redaction [--before REV] [--corpus FILE] [--fp-lines 30000]

Prints, for the rules at ``REV`` (default: ``main``) and for the working tree, in the same run:

* self-identifying recall per catalogue: each sample of ``bench/redaction_corpus/samples.jsonl``
  (built by ``bench.redaction_corpus`` from gitleaks', trufflehog's and detect-secrets' published
  test samples) alone in a sentence and assigned to a neutral name in every syntax;
* keyed recall per syntax: each keyed sample assigned to a secret-sounding name in YAML, TOML,
  JSON, ``.env``, Python, JS, Go, PHP, Java, XML, make, CLI flags, URLs, HTTP headers, curl,
  mysql and docker;
* false positives on ordinary text: changed lines per 10,000 of the Python standard library's
  source and the text documents under /usr/share/doc;
* ``redact()`` throughput on the string values of the transcript fixtures;
* secrets said in sentences (:mod:`bench.redaction_prose`): recall per language on
  ``bench/redaction_corpus/prose.txt``, its negative sentences left unchanged, and changed lines
  per 10,000 of this repository's own source, docs and transcript fixtures and the shared
  fixtures.

A sample counts as redacted when neither it nor any 12-character piece of it (start, middle,
end) is left in the output.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

from bench import redaction_prose as prose
from bench.common import header, table, write_section

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).with_name("redaction_corpus") / "samples.jsonl"
STDLIB = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
DOCS = Path("/usr/share/doc")
TRANSCRIPTS = ROOT / "tests" / "fixtures" / "transcripts"

Redact = Callable[[str], str]

# Neutral names for self-identifying samples: only the format itself can give them away.
PROSE = (
    "I pasted {v} into the settings page and it worked.",
    "{v}",
    "the value was ({v}) last time",
)
# (syntax, template); {n} is the name, {N} the name upper-cased, {d} the name with dashes.
SYNTAXES: tuple[tuple[str, str], ...] = (
    ("yaml", "{n}: {v}"),
    ("yaml-quoted", '  {n}: "{v}"'),
    ("toml", '{n} = "{v}"'),
    ("json", '{{"{n}": "{v}", "region": "eu"}}'),
    ("env", "{N}={v}"),
    ("env-export", 'export {N}="{v}"'),
    ("python", "{n} = '{v}'"),
    ("python-kwarg", 'client = Client({n}="{v}")'),
    ("js", "const {n} = '{v}';"),
    ("go-var", 'var {n} string = "{v}"'),
    ("go-short", '{n} := "{v}"'),
    ("php-concat", '${n} .= "{v}";'),
    ("php-array", "'{n}' => '{v}',"),
    ("java-setproperty", 'props.setProperty("{n}", "{v}");'),
    ("xml-element", "<{n}>{v}</{n}>"),
    ("xml-attr", '<add key="{n}" value="{v}" />'),
    ("make-immediate", "{N} ::= {v}"),
    ("make-posix", "{N} :::= {v}"),
    ("make-conditional", "{N} ?= {v}"),
    ("cli-flag", "mytool deploy --{d} {v} --verbose"),
    ("cli-flag-eq", "mytool deploy --{d}={v}"),
    ("http-header", "X-{D}: {v}"),
)
KEYED_ONLY: tuple[tuple[str, str], ...] = (
    ("url-credentials", "https://deploy:{v}@git.example.com/org/repo.git"),
    ("authorization-bearer", "Authorization: Bearer {v}"),
    ("curl-u", "curl -u admin:{v} https://api.example.com/v1/items"),
    ("mysql-p", "mysql -u root -p{v} production"),
    ("docker-login", "docker login -u ci -p {v} registry.example.com"),
)
KEY_NAMES = ("api_key", "apiToken", "client_secret", "password", "access_token", "secretKey")
NEUTRAL_NAME = "value"


def _fill(template: str, name: str, value: str) -> str:
    dashed = name.replace("_", "-")
    parts = dashed.replace("-", " ").split()
    title = "-".join(p[:1].upper() + p[1:] for p in parts)
    upper = "".join(("_" + c if c.isupper() else c) for c in name).upper().lstrip("_")
    return template.format(n=name, N=upper, d=dashed.lower(), D=title, v=value)


_PLACEHOLDER = re.compile(r"\[redacted:[a-z0-9_]+\]")


def _gone(secret: str, out: str) -> bool:
    out = _PLACEHOLDER.sub("", out)  # "[redacted:salad_cloud_api_key]" holds "salad_cloud_"
    if secret in out:
        return False
    if len(secret) < 24:
        return True
    mid = len(secret) // 2
    return all(p not in out for p in (secret[:12], secret[mid - 6 : mid + 6], secret[-12:]))


def load_samples(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def self_recall(redact: Redact, samples: list[dict[str, str]]) -> dict[str, tuple[int, int]]:
    """catalogue -> (redacted, total) over prose and every syntax with a neutral name."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for s in samples:
        if s["class"] != "self":
            continue
        value = s.get("text", s["secret"])
        texts = [p.format(v=value) for p in PROSE]
        texts += [_fill(t, NEUTRAL_NAME, value) for _, t in SYNTAXES]
        for text in texts:
            row = tally[s["catalogue"]]
            row[0] += _gone(s["secret"], redact(text))
            row[1] += 1
    return {k: (v[0], v[1]) for k, v in tally.items()}


def keyed_recall(redact: Redact, samples: list[dict[str, str]]) -> dict[str, tuple[int, int]]:
    """syntax -> (redacted, total) over the keyed samples, names taken in turn."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    keyed = [s for s in samples if s["class"] == "keyed"]
    for i, s in enumerate(keyed):
        name = KEY_NAMES[i % len(KEY_NAMES)]
        for syntax, template in SYNTAXES + KEYED_ONLY:
            row = tally[syntax]
            row[0] += _gone(s["secret"], redact(_fill(template, name, s["secret"])))
            row[1] += 1
    return {k: (v[0], v[1]) for k, v in tally.items()}


def ordinary_text(code_lines: int, doc_lines: int) -> list[str]:
    """Chunks of 40 lines: the standard library's top-level modules, then /usr/share/doc."""
    files = sorted(STDLIB.glob("*.py"))
    docs = sorted(p for p in DOCS.rglob("*") if p.is_file() and not p.is_symlink())
    return _chunks(files, code_lines) + _chunks(docs, doc_lines)


def _chunks(paths: list[Path], limit: int) -> list[str]:
    chunks: list[str] = []
    total = 0
    for path in paths:
        if total >= limit:
            break
        text = _read_text(path)
        if text is None:
            continue
        lines = text.splitlines()
        for i in range(0, len(lines), 40):
            chunks.append("\n".join(lines[i : i + 40]))
        total += len(lines)
    return chunks


def _read_text(path: Path) -> str | None:
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        if b"\0" in raw[:4096]:
            return None
        return raw.decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
        return None


def false_positives(redact: Redact, chunks: list[str]) -> tuple[int, int, list[str]]:
    """(changed lines, lines, a few changed lines) over ``chunks``."""
    changed = lines = 0
    examples: list[str] = []
    for chunk in chunks:
        before = chunk.split("\n")
        lines += len(before)
        out = redact(chunk)
        if out == chunk:
            continue
        after = out.split("\n")
        if len(after) != len(before):
            changed += len(before)
            continue
        for a, b in zip(before, after, strict=True):
            if a != b:
                changed += 1
                if len(examples) < 12:
                    examples.append(b.strip()[:140])
    return changed, lines, examples


def transcript_texts() -> list[str]:
    """Every string value of the transcript fixtures (the text redaction sees in capture)."""
    texts: list[str] = []

    def walk(v: object) -> Iterator[str]:
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            for x in v.values():
                yield from walk(x)
        elif isinstance(v, list):
            for x in v:
                yield from walk(x)

    for path in sorted(TRANSCRIPTS.rglob("*.json*")):
        for line in path.read_text(errors="replace").splitlines():
            try:
                texts.extend(t for t in walk(json.loads(line)) if len(t) >= 16)
            except json.JSONDecodeError:
                continue
    return texts


def throughput(redact: Redact, texts: list[str], repeat: int) -> float:
    """MB/s of redact() over ``texts``: CPU time (the machine is shared), best of ``repeat``."""
    size = sum(len(t) for t in texts)
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        for t in texts:
            redact(t)
        best = min(best, time.process_time() - started)
    return size / best / 1e6


def load_before(rev: str) -> Redact:
    """The redaction rules at ``rev``, loaded from git into a private module."""
    tmp = Path(tempfile.mkdtemp(prefix="am-redact-before-"))
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-tree", "--name-only", rev, "agents_memory/admission/"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    # redact.py and every module of the rules it imports (secret_formats, secret_names, …)
    names = [
        Path(p).stem
        for p in listed
        if Path(p).name == "redact.py" or Path(p).name.startswith("secret_")
    ]
    sources = {}
    for name in names:
        sources[name] = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:agents_memory/admission/{name}.py"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    package = "_am_redact_" + re.sub(r"\W", "_", rev)  # one package per revision loaded
    (tmp / package).mkdir()
    (tmp / package / "__init__.py").write_text("")
    for name, src in sources.items():
        private = src.replace("agents_memory.admission.", f"{package}.")
        (tmp / package / f"{name}.py").write_text(private)
    sys.path.insert(0, str(tmp))
    module: ModuleType = importlib.import_module(f"{package}.redact")
    return lambda text: module.redact(text).text


def load_now() -> Redact:
    spec = importlib.util.find_spec("agents_memory.admission.redact")
    assert spec is not None
    from agents_memory.admission.redact import redact

    return lambda text: redact(text).text


def _pct(pair: tuple[int, int]) -> str:
    return f"{100 * pair[0] / pair[1]:.1f} % ({pair[0]:,}/{pair[1]:,})" if pair[1] else "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default="main", help="git revision of the baseline rules")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--fp-lines", type=int, default=30000, help="standard library lines")
    parser.add_argument("--doc-lines", type=int, default=10000, help="/usr/share/doc lines")
    parser.add_argument("--repeat", type=int, default=3, help="throughput passes (best kept)")
    parser.add_argument("--no-write", action="store_true", help="do not update RESULTS.md")
    args = parser.parse_args(argv)
    samples = load_samples(args.corpus)
    systems = {f"before ({args.before})": load_before(args.before), "now": load_now()}
    chunks = ordinary_text(args.fp_lines, args.doc_lines)
    texts = transcript_texts()
    positives, negatives = prose.load_prose()
    own = prose.own_text()
    results = {}
    for label, redact in systems.items():
        results[label] = (
            self_recall(redact, samples),
            keyed_recall(redact, samples),
            false_positives(redact, chunks),
            throughput(redact, texts, args.repeat),
            prose.prose_recall(redact, positives),
            prose.prose_negatives(redact, negatives),
            false_positives(redact, own),
            prose.changed_lines(redact, own),
        )
    out = [header(_command(argv))]
    out.append(_report(results, samples, texts))
    body = "\n".join(out)
    print(body)
    if not args.no_write:
        write_section("Redaction (catalogue recall, false positives, speed)", body)
    return 0


def _command(argv: list[str] | None) -> str:
    return "python -m bench.redaction " + " ".join(argv if argv is not None else sys.argv[1:])


def _report(results: dict[str, tuple], samples: list[dict[str, str]], texts: list[str]) -> str:  # type: ignore[type-arg]
    labels = list(results)
    catalogues = sorted({s["catalogue"] for s in samples if s["class"] == "self"})
    rows = []
    for cat in catalogues:
        rows.append([f"self-identifying, {cat}", *(_pct(results[lb][0][cat]) for lb in labels)])
    total = {lb: _sum(results[lb][0].values()) for lb in labels}
    rows.append(["**self-identifying, all**", *(_pct(total[lb]) for lb in labels)])
    for syntax, _ in SYNTAXES + KEYED_ONLY:
        rows.append([f"keyed, {syntax}", *(_pct(results[lb][1][syntax]) for lb in labels)])
    keyed = {lb: _sum(results[lb][1].values()) for lb in labels}
    rows.append(["**keyed, all**", *(_pct(keyed[lb]) for lb in labels)])
    fp = {lb: results[lb][2] for lb in labels}
    rows.append(
        [
            "false positives, changed lines per 10,000",
            *(
                f"{1e4 * fp[lb][0] / max(1, fp[lb][1]):.2f} ({fp[lb][0]}/{fp[lb][1]:,})"
                for lb in labels
            ),
        ]
    )
    size = sum(len(t) for t in texts) / 1e6
    rows.append(
        [
            f"redact() throughput, MB/s ({len(texts):,} texts, {size:.1f} MB)",
            *(f"{results[lb][3]:.1f}" for lb in labels),
        ]
    )
    rows += _prose_rows(results, labels)
    parts = [table(["figure", *labels], rows)]
    n_self = sum(s["class"] == "self" for s in samples)
    parts.append(
        f"\nCorpus: {len(samples):,} samples ({n_self:,} self-identifying, "
        f"{len(samples) - n_self:,} keyed); self-identifying ones are tried in {len(PROSE)} prose "
        f"and {len(SYNTAXES)} assignment contexts with the neutral name `{NEUTRAL_NAME}`, keyed "
        f"ones in {len(SYNTAXES) + len(KEYED_ONLY)} syntaxes with the names {', '.join(KEY_NAMES)}."
    )
    now = labels[-1]
    if fp[now][2]:
        parts.append("\nChanged ordinary lines (now):\n")
        parts += [f"    {line}" for line in fp[now][2]]
    if results[now][5][2]:
        parts.append("\nChanged negative prose sentences (now):\n")
        parts += [f"    {line}" for line in results[now][5][2]]
    parts.append("\nChanged lines of the project's own text (now):\n")
    parts += [f"    {line}" for line in results[now][6][2]] or ["    (none)"]
    return "\n".join(parts)


def _prose_rows(results: dict[str, tuple], labels: list[str]) -> list[list[str]]:  # type: ignore[type-arg]
    """Secrets said in sentences: recall per language, negatives, the project's own text."""
    rows = []
    for lang in sorted(results[labels[-1]][4]):
        rows.append([f"prose, {lang}", *(_pct(results[lb][4][lang]) for lb in labels)])
    total = {lb: _sum(results[lb][4].values()) for lb in labels}
    rows.append(["**prose recall, all**", *(_pct(total[lb]) for lb in labels)])
    rows.append(["prose negatives left unchanged", *(_pct(results[lb][5][:2]) for lb in labels)])
    own = {lb: results[lb][6] for lb in labels}
    added = len(results[labels[-1]][7] - results[labels[0]][7])
    lines = max(1, own[labels[-1]][1])
    rows.append(
        [
            "false positives on the project's own text, changed lines per 10,000",
            *(
                f"{1e4 * own[lb][0] / max(1, own[lb][1]):.2f} ({own[lb][0]}/{own[lb][1]:,})"
                for lb in labels
            ),
        ]
    )
    rows.append(
        [
            "… of them changed now and not before, per 10,000",
            "—",
            f"{1e4 * added / lines:.2f} ({added}/{lines:,})",
        ]
    )
    return rows


def _sum(pairs: object) -> tuple[int, int]:
    a = b = 0
    for x, y in pairs:  # type: ignore[attr-defined]
        a += x
        b += y
    return a, b


if __name__ == "__main__":
    raise SystemExit(main())
