"""Every ``packsched`` command shown in README.md and docs/**/*.md runs, from the repository root, and exits 0.

A command is a line of a ```sh (bash, shell, console) block that starts with ``packsched `` or
``.venv/bin/packsched `` (``$ `` prompts and ``\\`` continuations are understood); the block's other commands (a
``printf`` writing a file) run before it in the same shell. The doc's own words say what else to expect:

- a ``# error: ...`` comment right after a command: it fails with exit code 2 and prints that error (``...`` stands
  for any text);
- a ```text (or unlabelled) block right after the command's block: its output; every line shown must appear in the
  real standard output, in the same order (a doc may show an excerpt; ``...`` lines elide).

``/tmp/`` in a command becomes a fresh temporary folder; the repository's absolute path is removed from the output.
Commands that need a live cluster, the Alibaba trace (absent) or minutes of replays are skipped, with the reason."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
TRACE = ROOT.parent / "shared" / "data" / "alibaba-gpu-v2023"
SHELL_LANGS = {"sh", "bash", "shell", "console"}
OUTPUT_LANGS = {"", "text", "output"}
PACKSCHED = re.compile(r"^(?:\.venv/bin/)?packsched(?=\s)")
ELISION = ("...", "…")

# Commands that cannot run here, by a pattern of the command (as shown, `.venv/bin/` and prompts removed).
LIVE_CLUSTER = "needs a live Kubernetes cluster"
NEEDS_LIVE: list[tuple[str, str]] = [
    (r"^packsched (serve|snapshot)\b", LIVE_CLUSTER),
    (r"\ssnap/", "reads a snapshot that `packsched snapshot` takes of a live cluster"),
    (
        r"^packsched verify-record (?!examples/)",
        "replays a record that `packsched serve --record` writes on a live cluster",
    ),
]
# Replays of the full trace that take minutes on the 2-core reference machine (FGD: about 13 s a run).
LONG_RUNS: dict[str, str] = {
    "packsched compare ../shared/data/alibaba-gpu-v2023 --seeds 42-51 --out-dir out/compare": (
        "long run: 60 replays of the full trace (six policies x ten seeds), about 3 minutes"
    ),
    "packsched replay ../shared/data/alibaba-gpu-v2023 --pods default --policy FGD --seeds 42-51 --workers 2 "
    "-o json --out-dir out/fgd": "long run: 10 FGD replays of the full trace, about 70 s on two workers",
    "packsched compare ../shared/data/alibaba-gpu-v2023 --policies "
    "Random,DotProd,Clustering,Packing,BestFit,FGD,MostAllocated,RequestedToCapacityRatio,LeastAllocated "
    "--seeds 42-51 --workers 2 --out-dir out/compare": (
        "long run: 90 replays of the full trace (nine policies x ten seeds), about 2.5 minutes"
    ),
    "packsched tune ../shared/data/alibaba-gpu-v2023 --space examples/tune/space.yaml --trials 40 --workers 2 "
    "--holdout-seeds 45-54 --baselines stock,paper,FGDPack --out-dir out/tune": (
        "long run: 230 replays of the full trace (40 trials x 3 seeds, then 11 x 10), about 8 minutes"
    ),
    "packsched replay ../shared/data/alibaba-gpu-v2023 --config examples/tune/best-config-default-trace.yaml "
    "--seeds 45-54 --workers 2": "long run: 10 replays of the full trace, about 30 s on two workers",
    "packsched compare ../shared/data/alibaba-gpu-v2023 --policies FGD,FGDDemand --seeds 42-61 --workers 2 -o json": (
        "long run: 40 replays of the full trace (FGD and FGDDemand x 20 seeds), about 4 minutes"
    ),
    "packsched tune ../shared/data/alibaba-gpu-v2023 --pods gpuspec33 --space examples/tune/space.yaml --trials 30 "
    "--workers 2 --holdout-seeds 45-54 --baselines stock,BestFit,FGD,FGDPack --out-dir out/tune-gpuspec33": (
        "long run: 160 replays of a trace variant (30 trials x 3 seeds, then 7 x 10), about 7 minutes"
    ),
    "packsched replay ../shared/data/alibaba-gpu-v2023 --pods gpuspec33 "
    "--config examples/tune/best-config-gpuspec33.yaml --seeds 45-54 --workers 2": (
        "long run: 10 replays of a trace variant, about 30 s on two workers"
    ),
    "packsched replay ../shared/data/alibaba-gpu-v2023 --policy BestFit --seeds 42 --as-dra": (
        "long run: the full trace with DRA's allocator tried node by node, far longer than the 122-node sample's "
        "minute (bench/dra_crosscheck.py and tests/sim/test_replay_dra.py check smaller ones)"
    ),
    "packsched compare /tmp/jobs/workload --config /tmp/jobs/config-coscheduling.yaml "
    "--config /tmp/jobs/config-pod-by-pod.yaml": (
        "long run: two simulations of 200 gangs over 10 hours, about 30 s (tests/sim/test_jobgen.py runs a smaller one)"
    ),
    "packsched tune /tmp/jobs --space examples/tune/space-jobs.yaml --trials 20 --holdout-seeds 45-49 --workers 2 "
    "--out-dir /tmp/tune-jobs": (
        "long run: 90 simulations of 200 gangs (20 trials x 3 seeds, then 6 x 5), about 14 minutes "
        "(tests/sim/test_jobtune.py runs a smaller one, as does the command of docs/guides/tuning.md)"
    ),
}


@dataclass
class DocCommand:
    where: str  # file:line
    command: str  # as shown, `.venv/bin/` and prompts removed
    setup: list[str] = field(default_factory=list)
    error: str | None = None  # a `# error: ...` comment that follows it
    output: list[str] | None = None  # the output block that follows its block (last command of the block only)

    def skip_reason(self) -> str | None:
        for pattern, reason in NEEDS_LIVE:
            if re.search(pattern, self.command):
                return reason
        if "../shared/data/alibaba-gpu-v2023" in self.command and not TRACE.is_dir():
            return f"the Alibaba GPU trace is not at {TRACE} (clone with shared/ beside)"
        return LONG_RUNS.get(self.command)


def _blocks(path: Path) -> list[tuple[str, int, list[str], int]]:
    """(language, first line number, lines, line number after the closing fence) of each fenced block."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"^\s*```(\S*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        out.append((m.group(1), i + 2, lines[i + 1 : j], j + 1))
        i = j + 1
    return out


def _logical_lines(lines: list[str], first: int) -> list[tuple[int, str]]:
    """Continuation lines joined, prompts removed: (line number, text)."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for n, raw in enumerate(lines, first):
        text = raw.strip()
        if pending is None:
            text = text.removeprefix("$ ")
        if pending is not None:
            text = f"{pending[1]} {text}"
            n = pending[0]
        if text.endswith("\\"):
            pending = (n, text[:-1].rstrip())
            continue
        pending = None
        out.append((n, text))
    return out


def collect() -> list[DocCommand]:
    found: list[DocCommand] = []
    for path in DOCS:
        rel = path.relative_to(ROOT).as_posix()
        blocks = _blocks(path)
        text_lines = path.read_text(encoding="utf-8").splitlines()
        for index, (lang, first, lines, after) in enumerate(blocks):
            if lang not in SHELL_LANGS:
                continue
            setup: list[str] = []
            mine: list[DocCommand] = []
            for n, text in _logical_lines(lines, first):
                if not text:
                    continue
                if text.startswith("#"):
                    if mine and text.startswith("# error:") and mine[-1].error is None:
                        mine[-1].error = text.removeprefix("# ").strip()
                    continue
                if PACKSCHED.match(text):
                    cmd = re.sub(r"\s+", " ", PACKSCHED.sub("packsched", text, count=1))
                    mine.append(DocCommand(f"{rel}:{n}", cmd, list(setup)))
                else:
                    setup.append(text)
            if not mine:
                continue
            nxt = blocks[index + 1] if index + 1 < len(blocks) else None
            if (
                nxt is not None
                and nxt[0] in OUTPUT_LANGS
                and all(not t.strip() for t in text_lines[after : nxt[1] - 2])
            ):
                mine[-1].output = nxt[2]
            found += mine
    return found


COMMANDS = collect()


# A guide's command may replay the whole GPU trace (past 100 s at load 14-17 on the 2-core machine): the bound only
# catches a command that hangs, below pytest's own per-test timeout (pyproject.toml).
DOC_TIMEOUT_S = 360


def _run(doc: DocCommand, tmp: Path) -> subprocess.CompletedProcess[str]:
    def here(text: str) -> str:
        return text.replace("/tmp/", f"{tmp}/")

    runner = f"{sys.executable} -m packsched"
    script = "\n".join(
        # /tmp/ of the doc's text only: the interpreter's own path may be under /tmp (a clone there)
        ["set -e", *(PACKSCHED.sub(runner, here(s)) for s in doc.setup), PACKSCHED.sub(runner, here(doc.command))]
    )
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
    return subprocess.run(
        ["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=DOC_TIMEOUT_S, check=False
    )


def _pattern(expected: str) -> re.Pattern[str]:
    parts = [re.escape(p) for p in re.split(r"\.\.\.|…", expected)]
    return re.compile(".*".join(parts))


def _normalise(text: str, tmp: Path) -> list[str]:
    text = text.replace(f"{tmp}/", "/tmp/").replace(f"{ROOT}/", "")
    return [line.rstrip() for line in text.splitlines()]


def test_the_docs_show_commands() -> None:
    assert len(COMMANDS) >= 25, [c.where for c in COMMANDS]
    assert len({c.where for c in COMMANDS}) == len(COMMANDS)


@pytest.mark.parametrize("doc", COMMANDS, ids=[c.where for c in COMMANDS])
def test_doc_command(doc: DocCommand, tmp_path: Path) -> None:
    reason = doc.skip_reason()
    if reason:
        pytest.skip(reason)
    done = _run(doc, tmp_path)
    shown = f"{doc.where}: {doc.command}\nstdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    if doc.error is not None:
        assert done.returncode == 2, shown
        assert _pattern(doc.error).search("\n".join(_normalise(done.stderr, tmp_path))), shown
        return
    assert done.returncode == 0, shown
    if doc.output is None:
        return
    real = _normalise(done.stdout, tmp_path)
    at = 0
    for line in (x.rstrip() for x in doc.output):
        if not line.strip() or line.strip() in ELISION:
            continue
        while at < len(real) and real[at] != line:
            at += 1
        assert at < len(real), (
            f"{doc.where}: the doc shows a line the command does not print (or not here):\n{line}\n{shown}"
        )
        at += 1


def test_simulate_prints_the_notes_the_manifests_reference_promises(tmp_path: Path) -> None:
    """docs/reference/manifests.md: skipped kinds, configurations in a folder, nodes without a pod capacity and
    finished pods each give a note on standard error."""
    (tmp_path / "cluster.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: 4, memory: 4Gi}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\nstatus: {phase: Succeeded}\n",
        encoding="utf-8",
    )
    (tmp_path / "config.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n", encoding="utf-8"
    )
    done = subprocess.run(
        [sys.executable, "-m", "packsched", "simulate", str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: ")]
    for words in ("ConfigMap ignored", "KubeSchedulerConfiguration skipped", "no 'pods' in allocatable", "Succeeded"):
        assert any(words in n for n in notes), (words, done.stderr)


def test_relative_links_point_to_files_in_the_repository() -> None:
    """A link without a scheme names a file of this repository (an anchor is not checked); the specs and data
    beside the repository (../shared) are not links."""
    bad = []
    for path in DOCS:
        text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            resolved = (path.parent / target.split("#")[0]).resolve()
            if not resolved.is_relative_to(ROOT) or not resolved.exists():
                bad.append(f"{path.relative_to(ROOT)}: {target}")
        bad += [f"{path.relative_to(ROOT)}: {m}" for m in re.findall(r"\S*shared/spec\S*", text)]
    assert not bad


def test_docs_that_call_a_bare_packsched_say_how_to_get_it() -> None:
    """Issue 24: the guides called `packsched` while the README used `.venv/bin/packsched`, and nothing said to
    activate the environment."""
    # a command line of its own, or a command with an argument in the prose (`packsched simulate examples/timeline`)
    bare = re.compile(r"^(?:\$ )?packsched\s|`packsched [a-z-]+ [^`]*(?:examples/|\.\./shared|\.json|\.yaml)", re.M)
    missing = [
        str(doc.relative_to(ROOT))
        for doc in DOCS
        if bare.search(doc.read_text(encoding="utf-8")) and ".venv/bin/activate" not in doc.read_text(encoding="utf-8")
    ]
    assert not missing
