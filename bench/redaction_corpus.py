"""Build the redaction bench's corpus of published secret samples from the public catalogues.

    python -m bench.redaction_corpus --gitleaks DIR --trufflehog DIR --detect-secrets DIR

Each DIR is a checkout (or a ``git archive`` export) of the catalogue's repository. The script
reads the catalogues' own test samples and writes ``bench/redaction_corpus/samples.jsonl``: one
line per distinct sample, ``{"catalogue", "rule", "class", "secret"}`` where ``class`` is
``self`` (the format identifies itself: a fixed prefix or structure) or ``keyed`` (only the name
it is assigned to says it is a secret). No catalogue code is copied: the catalogues' rule regexes
are used at build time only to cut each sample's secret out of the test line it appears in, and a
sample written as a regex (gitleaks' ``secrets.NewSecret(…)``) is drawn from that regex with a
fixed seed.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import random
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

try:  # Python 3.11+: the parser moved
    import re._constants as sre_c  # type: ignore[import-not-found]
    import re._parser as sre_p  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sre_constants as sre_c  # type: ignore[no-redef]
    import sre_parse as sre_p  # type: ignore[no-redef]

OUT = Path(__file__).with_name("redaction_corpus") / "samples.jsonl"
PER_RULE = 4  # samples kept per rule (the first ones found)

# --- drawing a string from a regex --------------------------------------------------------------

_CATEGORY = {
    sre_c.CATEGORY_DIGIT: "0123456789",
    sre_c.CATEGORY_WORD: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
    sre_c.CATEGORY_SPACE: " ",
}


def _charset(items: list[tuple[object, object]]) -> str:
    chars: list[str] = []
    negate = False
    for op, av in items:
        if op is sre_c.NEGATE:
            negate = True
        elif op is sre_c.LITERAL:
            chars.append(chr(av))  # type: ignore[arg-type]
        elif op is sre_c.RANGE:
            lo, hi = av  # type: ignore[misc]
            chars.extend(chr(c) for c in range(lo, hi + 1))
        elif op is sre_c.CATEGORY:
            chars.extend(_CATEGORY.get(av, "a"))  # type: ignore[call-overload]
    if negate:
        pool = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        return "".join(c for c in pool if c not in chars) or "a"
    return "".join(chars) or "a"


def _draw(parsed: object, rng: random.Random, out: list[str]) -> None:
    for op, av in parsed:  # type: ignore[attr-defined]
        if op is sre_c.LITERAL:
            out.append(chr(av))
        elif op is sre_c.ANY:
            out.append(rng.choice("abcdefXYZ0123"))
        elif op is sre_c.IN:
            out.append(rng.choice(_charset(av)))
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
            lo, hi, sub = av
            hi = min(hi, lo + 8) if hi != sre_c.MAXREPEAT else lo + 8
            for _ in range(rng.randint(lo, max(lo, hi))):
                _draw(sub, rng, out)
        elif op is sre_c.SUBPATTERN:
            _draw(av[-1], rng, out)
        elif op is sre_c.BRANCH:
            _draw(rng.choice(av[1]), rng, out)


def draw(pattern: str, seed: str) -> str:
    out: list[str] = []
    _draw(sre_p.parse(go_regex(pattern)), random.Random(seed), out)
    return "".join(out)


def go_regex(pattern: str) -> str:
    """A Go (RE2) regex in Python's syntax, as far as the catalogues use it."""
    pattern = pattern.replace(r"\z", r"\Z").replace("[:alnum:]", "a-zA-Z0-9")
    pattern = pattern.replace("[:alpha:]", "a-zA-Z").replace("[:digit:]", "0-9")
    pattern = pattern.replace("[:upper:]", "A-Z").replace("[:lower:]", "a-z")
    pattern = pattern.replace("[:xdigit:]", "0-9a-fA-F").replace("[:space:]", r"\s")
    pattern = pattern.replace("[:punct:]", r"!-/:-@\[-`{-~")
    if "(?i)" in pattern[1:]:
        pattern = "(?i)" + pattern.replace("(?i)", "")
    return pattern


def compile_go(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(go_regex(pattern))
    except (re.error, OverflowError, RecursionError):
        return None


# --- Go source: string literals and call arguments -----------------------------------------------

_GO_STRING = re.compile(r'`([^`]*)`|"((?:[^"\\\n]|\\.)*)"')


def go_unquote(m: re.Match[str]) -> str:
    if m.group(1) is not None:
        return m.group(1)
    try:
        return str(ast.literal_eval('"' + m.group(2) + '"'))
    except (ValueError, SyntaxError):
        return m.group(2)


def go_strings(src: str) -> Iterator[tuple[int, int, str]]:
    for m in _GO_STRING.finditer(src):
        yield m.start(), m.end(), go_unquote(m)


def call_args(src: str, open_paren: int) -> tuple[list[str], int]:
    """The top-level arguments of the call whose ``(`` is at ``open_paren``, and its end."""
    depth, i, start, args = 0, open_paren, open_paren + 1, []
    while i < len(src):
        c = src[i]
        if c in '`"':
            m = _GO_STRING.match(src, i)
            i = m.end() if m else i + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(src[start:i].strip())
                return args, i + 1
        elif c == "," and depth == 1:
            args.append(src[start:i].strip())
            start = i + 1
        i += 1
    return args, i


_HELPERS = {
    "Numeric": "[0-9]{{{}}}",
    "Hex": "[a-f0-9]{{{}}}",
    "AlphaNumeric": "[a-z0-9]{{{}}}",
    "AlphaNumericExtendedShort": "[a-z0-9_-]{{{}}}",
    "AlphaNumericExtended": "[a-z0-9=_-]{{{}}}",
    "AlphaNumericExtendedLong": "[a-z0-9/=_+-]{{{}}}",
}


def go_eval(expr: str, seed: str) -> str | None:
    """Evaluate gitleaks' sample expressions: literals, ``+``, ``secrets.NewSecret(regex)`` and the
    ``utils`` character-class helpers. ``None`` for anything else (a variable, a Sprintf)."""
    parts: list[str] = []
    i = 0
    while i < len(expr):
        c = expr[i]
        if c in " \t\n+":
            i += 1
            continue
        m = _GO_STRING.match(expr, i)
        if m:
            parts.append(go_unquote(m))
            i = m.end()
            continue
        call = re.compile(r"(secrets\.NewSecret|utils\.(\w+))\(").match(expr, i)
        if call is None:
            return None
        args, i = call_args(expr, call.end() - 1)
        if call.group(2) == "Hex8_4_4_4_12":
            parts.append("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
            continue
        inner = go_eval(args[0], seed) if args and args[0] else None
        if inner is None:
            return None
        if call.group(2):
            helper = _HELPERS.get(call.group(2))
            if helper is None:
                return None
            parts.append(helper.format(inner))
        else:
            try:
                parts.append(draw(inner, seed + str(len(parts))))
            except (re.error, OverflowError, RecursionError, TypeError):
                return None
    return "".join(parts)


# --- the catalogues -----------------------------------------------------------------------------

Sample = dict[str, str]


def _secret(m: re.Match[str], group: int | None = None) -> str:
    if group is not None and m.re.groups >= group:
        return m.group(group) or ""
    for g in range(1, m.re.groups + 1):
        if m.group(g):
            return m.group(g)
    return m.group()


def _excluded(src: str, pattern: str) -> list[tuple[int, int]]:
    spans = []
    for m in re.finditer(pattern, src):
        _, end = call_args(src, m.end() - 1)
        spans.append((m.start(), end))
    return spans


def gitleaks(root: Path) -> Iterator[Sample]:
    """Rules of ``config/gitleaks.toml`` with the samples of ``cmd/generate/config/rules``."""
    toml = tomllib.loads((root / "config/gitleaks.toml").read_text())
    rules = {r["id"]: r for r in toml["rules"]}
    for path in sorted((root / "cmd/generate/config/rules").glob("*.go")):
        src = path.read_text()
        for block in re.split(r"\nfunc ", src)[1:]:
            rid = re.search(r'RuleID:\s*"([^"]+)"', block)
            if rid is None or rid.group(1) not in rules:
                continue
            rule = rules[rid.group(1)]
            keyed = "GenerateSemiGenericRegex" in block or rule["id"].startswith(
                ("generic", "curl")
            )
            klass = "keyed" if keyed else "self"
            regex = compile_go(rule["regex"]) if "regex" in rule else None
            for m in re.finditer(r"utils\.GenerateSampleSecrets?\(", block):
                args, _ = call_args(block, m.end() - 1)
                if len(args) == 2:
                    value = go_eval(args[1], f"{rule['id']}:{m.start()}")
                    if value:
                        yield {
                            "catalogue": "gitleaks",
                            "rule": rule["id"],
                            "class": klass,
                            "secret": value,
                        }
            if regex is None:
                continue
            skip = _excluded(block, r"fps\s*:?=\s*(?:\[\]string\{|append\()")
            skip += _excluded(block, r"utils\.GenerateSampleSecrets?\(")
            for start, _end, text in go_strings(block):
                if any(a <= start < b for a, b in skip) or len(text) < 8:
                    continue
                for found in regex.finditer(text):
                    secret = _secret(found, rule.get("secretGroup"))
                    if len(secret) >= 8:
                        yield {
                            "catalogue": "gitleaks",
                            "rule": rule["id"],
                            "class": klass,
                            "secret": secret,
                        }


def _leading_literal(parsed: object) -> int:
    """How many literal characters the first capture group (or the pattern) starts with."""
    items = list(parsed)  # type: ignore[call-overload]
    for op, av in items:
        if op is sre_c.SUBPATTERN and av[0] is not None:
            return _literal_run(av[-1])
    return _literal_run(items)


def _literal_run(items: object) -> int:
    run = 0
    for op, av in items:  # type: ignore[attr-defined]
        if op is sre_c.AT:
            continue
        if op is sre_c.LITERAL:
            run += 1
        elif op is sre_c.SUBPATTERN and run == 0:
            return _literal_run(av[-1])
        else:
            break
    return run


def trufflehog(root: Path) -> Iterator[Sample]:  # noqa: PLR0912
    """Detectors of ``pkg/detectors``: fixed-prefix ones are ``self``, prefix-keyword ones
    (``detectors.PrefixRegex``) ``keyed``; samples are their regexes' finds in ``*_test.go``."""
    for det in sorted(p for p in (root / "pkg/detectors").iterdir() if p.is_dir()):
        sources = [p for p in det.rglob("*.go") if not p.name.endswith("_test.go")]
        tests = [p for p in det.rglob("*_test.go") if "integration" not in p.name]
        if not sources or not tests:
            continue
        self_res: list[re.Pattern[str]] = []
        keyed_res: list[re.Pattern[str]] = []
        for path in sources:
            src = path.read_text(errors="replace")
            for m in re.finditer(r"regexp\.MustCompile\(", src):
                args, _ = call_args(src, m.end() - 1)
                if not args:
                    continue
                literals = list(go_strings(args[0]))
                if not literals:
                    continue
                compiled = compile_go(literals[-1][2])
                if compiled is None:
                    continue
                if "PrefixRegex" in args[0]:
                    keyed_res.append(compiled)
                elif len(literals) == 1 and _leading_literal(sre_p.parse(compiled.pattern)) >= 3:
                    self_res.append(compiled)
        texts = [t for p in tests for _, _, t in go_strings(p.read_text(errors="replace"))]
        for klass, regexes in (("self", self_res), ("keyed", keyed_res if not self_res else [])):
            for regex in regexes:
                for text in texts:
                    for found in regex.finditer(text):
                        secret = _secret(found)
                        if len(secret) >= 8:
                            yield {
                                "catalogue": "trufflehog",
                                "rule": det.name,
                                "class": klass,
                                "secret": secret,
                            }


_DS_KEYED = {"keyword", "basic_auth", "high_entropy_strings"}


def detect_secrets(root: Path) -> Iterator[Sample]:
    """Regex plugins of ``detect_secrets/plugins`` with the strings of ``tests/plugins``."""
    tests = {p.name.removesuffix("_test.py"): p for p in (root / "tests/plugins").glob("*.py")}
    for path in sorted((root / "detect_secrets/plugins").glob("*.py")):
        name = path.stem
        if name in _DS_KEYED or name in ("__init__", "base", "ip_public"):
            continue
        tree = ast.parse(path.read_text())
        regexes = []
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", "") == "compile"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                flags = re.IGNORECASE if "IGNORECASE" in ast.dump(node) else 0
                with contextlib.suppress(re.error):
                    regexes.append(re.compile(node.args[0].value, flags))
        test = next((p for k, p in tests.items() if k.startswith(name.split("_")[0])), None)
        if test is None or not regexes:
            continue
        texts = [
            n.value
            for n in ast.walk(ast.parse(test.read_text()))
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
        for regex in regexes:
            for text in texts:
                for found in regex.finditer(text):
                    secret = _secret(found)
                    if len(secret) >= 8:
                        yield {
                            "catalogue": "detect-secrets",
                            "rule": name,
                            "class": "self",
                            "secret": secret,
                        }


def _keyword_samples(root: Path) -> Iterator[Sample]:
    """detect-secrets' keyword plugin: the quoted values of its test lines are keyed samples."""
    test = root / "tests/plugins/keyword_test.py"
    for node in ast.walk(ast.parse(test.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for m in re.finditer(r"""['"]([^'"\s{}]{8,})['"]""", node.value):
                yield {
                    "catalogue": "detect-secrets",
                    "rule": "keyword",
                    "class": "keyed",
                    "secret": m.group(1),
                }


# Samples that are not secrets on their own: an endpoint, an e-mail address, a UUID, a value with
# the text around it (kubernetes' ``extra: …``, sidekiq's ``user:pass``), a placeholder.
_ENDPOINT = re.compile(
    r"[\w.,-]+\.(?:com|io|net|org|cloud|dev)(?::\d+)?|[^@\s]+@[\w.-]+\.\w+"
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|[\w.-]+: .*|[0-9a-f]{8}:[0-9a-f]{8}"
)
_URL = re.compile(r"[a-z][a-z0-9+.:]*://(?:[^:/@\s]*:(?P<pw>[^@\s]+)@)?[^/\s]*(?P<path>/\S*)?")


# trufflehog's jdbc samples hold placeholder passwords ("pass", "secret") or none at all.
_EXCLUDED = {"jdbc"}
_CONTEXT_ONLY = {"nuget-config-password", "kubernetes-secret-yaml", "sidekiq-sensitive-url"}


def clean(secret: str) -> dict[str, str] | None:  # noqa: PLR0911
    """The sample's secret (and the text it stands in when it is part of a URL), or ``None``
    when it is not a secret on its own."""
    secret = secret.strip().strip("\"'`")
    m = _URL.fullmatch(secret)
    if m:  # a URL: its password, or its last long path segment (a webhook's key)
        sig = re.search(r"[?&]sig=([^&\s]+)", secret)
        if sig:  # a signed URL: the signature is the secret
            return {"text": secret, "secret": sig.group(1)}
        if "?" in secret and not m.group("pw"):
            return None  # an endpoint with parameters but no credential
        if m.group("pw"):
            return {"text": secret, "secret": m.group("pw")}
        tail = [seg for seg in (m.group("path") or "").split("/") if len(seg) >= 16]
        if not tail:
            return None
        return {"text": secret, "secret": tail[-1]}
    app = re.fullmatch(r"[0-9]{15,16}(?:\||%7C)(?P<secret>\S+)", secret)
    if app:  # a Facebook "app id|app secret": the id is public
        return {"text": secret, "secret": app.group("secret")}
    if len(secret) < 12 or _ENDPOINT.fullmatch(secret):
        return None
    if re.search(r"(.)\1{7}", secret) or len(set(secret)) < 8:
        return None  # a placeholder such as AKCxxxxxxxxxx or sk-AAAA…
    return {"secret": secret}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gitleaks", type=Path, required=True)
    parser.add_argument("--trufflehog", type=Path, required=True)
    parser.add_argument("--detect-secrets", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    seen: set[tuple[str, str]] = set()
    per_rule: dict[tuple[str, str], int] = {}
    rows = []
    sources = (
        gitleaks(args.gitleaks),
        trufflehog(args.trufflehog),
        detect_secrets(args.detect_secrets),
        _keyword_samples(args.detect_secrets),
    )
    for source in sources:
        for sample in source:
            cleaned = clean(sample["secret"])
            if cleaned is None or len(cleaned["secret"]) < 12 or sample["rule"] in _EXCLUDED:
                continue
            sample.pop("secret")
            sample.update(cleaned)
            if sample["rule"] in _CONTEXT_ONLY:
                sample["class"] = "keyed"
            key = (sample["catalogue"], sample["rule"])
            if (sample["catalogue"], sample["secret"]) in seen or per_rule.get(key, 0) >= PER_RULE:
                continue
            if "\n" in sample["secret"] and not sample["secret"].startswith("-----BEGIN"):
                continue
            seen.add((sample["catalogue"], sample["secret"]))
            per_rule[key] = per_rule.get(key, 0) + 1
            rows.append(sample)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w") as f:
        for row in rows:
            f.write(json.dumps(row, sort_keys=True) + "\n")
    counts: dict[tuple[str, str], int] = {}
    for row in rows:
        counts[(row["catalogue"], row["class"])] = (
            counts.get((row["catalogue"], row["class"]), 0) + 1
        )
    for (cat, klass), n in sorted(counts.items()):
        print(f"{cat:15} {klass:6} {n:5} samples")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
